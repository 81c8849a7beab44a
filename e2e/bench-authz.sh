#!/usr/bin/env bash
# celer's authorization webhook under load: issue 19's targets, each against a reference
# measured in the same run (docs/benchmarks.md, "Authorization webhook under load").
#
#   e2e/bench-authz.sh [webhook] [apiserver] [sweep]     (default: all three)
#
# webhook    celer serve alone with 50 CEL AuthorizationPolicies and 4 Rego ones (20 deny
#            rules; e2e/authz-bench-policies.py), `celer bench --authz-mix` (SubjectAccessReviews,
#            75% reads) at $RATE for $DURATION, CPU and RSS of celer from /proc. Reference: the
#            same celer with no policy for the mix (every answer NoOpinion), then with 1,000 more policies
#            for resources the mix never asks about.
# apiserver  the mix through kube-apiserver: 75% GETs (list Pods, get the kubernetes Service,
#            list Namespaces), 25% dry-run Pod creates, at 75 rps, 20 concurrent, 60 s, as
#            bench-user (celer is called) and as bench-reference (a matchCondition skips celer)
#            on the same API server, interleaved, $ROUNDS [3] rounds each; the added p50/p99 is
#            the median of the per-round differences. Once with the API server's answer cache
#            off (every request reaches celer), once with its defaults.
# sweep      the same pair at rising rates, caching off, one 20 s round each, until the added
#            p99 reaches 5 ms or a request fails.
#
# The serving floor (crates/webhook/examples/floor_server.rs: celer's TLS, HTTP stack and
# runtime with no engine, no opinion on any review) is measured beside celer: in the webhook
# part as one more set, and with AUTHORIZER=floor the apiserver and sweep parts call it in
# celer's place (same configuration, same matchConditions): what any webhook authorizer built
# this way adds here.
#
# Environment: CELER_BIN [target/release/celer, built if missing]; RATE [5000], DURATION [30s],
# BENCH_FLAGS (extra flags of the webhook part's `celer bench`: `--http2` for one HTTP/2
# connection, as kube-apiserver's webhook client keeps), API_RATE [75], API_DURATION [60s], API_CONCURRENCY [20], SWEEP [75,150,300,600,1000,1500];
# AUTHORIZER [celer; floor], MODES [nocache cache: the API server's answer cache off, then on];
# the control plane's settings as e2e/control-plane.sh reads them; CELER_E2E_WORK
# [target/e2e/bench-authz], where every report (JSON) is kept.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench-authz}"
rm -rf "$work" && mkdir -p "$work"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$work/control-plane}"
CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
[ -x "$CELER_BIN" ] || (cd "$repo" && cargo build --release -p celer)
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

RATE="${RATE:-5000}" DURATION="${DURATION:-30s}"
API_RATE="${API_RATE:-75}" API_DURATION="${API_DURATION:-60s}" API_CONCURRENCY="${API_CONCURRENCY:-20}"
SWEEP="${SWEEP:-75,150,300,600,1000,1500}"
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(webhook apiserver sweep)
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

cleanup() {
  stop_celer TERM
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

python3 "$here/authz-bench-policies.py" > "$work/policies.yaml"
python3 "$here/authz-bench-policies.py" --other 1000 > "$work/policies-1000-other.yaml"
# What the Rego modules cost: the same 50 CEL policies without them.
python3 "$here/authz-bench-policies.py" --rego 0 > "$work/cel-only.yaml"
# The reference: one policy for a resource the mix never asks about, so no review is evaluated
# (celer refuses an empty policy file) and every answer is NoOpinion.
python3 "$here/authz-bench-policies.py" --cel 0 --rego 0 --other 1 > "$work/none.yaml"

# p99 and the rest of a report, one line: NAME FILE
summary() {
  jq -r --arg name "$1" '.run as $r | "\($name): \($r.requests) requests at \($r.achieved_rps|floor)/s, scheduled p50 \($r.scheduled.p50) p99 \($r.scheduled.p99) p99.9 \($r.scheduled.p999) max \($r.scheduled.max) ms; http p99 \($r.http.p99) ms; failed \($r.requests - $r.successful); behind schedule \($r.behind_schedule)" + (if $r.resources then "; celer \($r.resources.cpu_cores.mean) cores, \($r.resources.rss_mib.p95) MiB" else "" end)' "$2"
}

if want webhook; then
  for set in floor none cel-only policies policies-1000-other; do
    if [ "$set" = floor ]; then start_floor "$set"; else start_celer "$set" --policies "$work/$set.yaml"; fi
    "$CELER_BIN" bench --target "https://127.0.0.1:$celer_port/authorize" \
      --ca "$work/tls-$set/ca.crt" --authz-mix --rate "$RATE" --duration "$DURATION" \
      --warmup-rate 1000 --warmup-duration 5s --max-concurrency 64 --pid "$celer_pid" \
      ${BENCH_FLAGS:-} --output json --quiet > "$work/webhook-$set.json"
    summary "webhook, $set" "$work/webhook-$set.json"
    stop_celer TERM
  done
  jq -rn --slurpfile n "$work/webhook-none.json" --slurpfile p "$work/webhook-policies.json" \
    --slurpfile o "$work/webhook-policies-1000-other.json" --slurpfile c "$work/webhook-cel-only.json" \
    --slurpfile f "$work/webhook-floor.json" '
    def r(x): (x[0].run.scheduled.p99);
    def cores(x): ((x[0].run.resources.cpu_cores.mean / (x[0].run.achieved_rps / 1000) * 1000 | round) / 1000);
    "webhook: scheduled p99 with the 54 policies \(r($p)) ms, \((r($p) / r($n) * 100 | round) / 100)x no policies (\(r($n)) ms); with 1,000 more for other resources \(r($o)) ms, \((r($o) / r($p) * 100 | round) / 100)x",
    "webhook: celer cores per 1,000 SAR/s: \(cores($p)) (no policies: \(cores($n)); the 50 CEL policies without the Rego modules: \(cores($c)), scheduled p99 \(r($c)) ms)",
    "webhook: the serving floor (no engine): \(cores($f)) cores per 1,000 SAR/s, scheduled p99 \(r($f)) ms; celer with the 54 policies \((cores($p) / cores($f) * 100 | round) / 100)x its cores, \((r($p) / r($f) * 100 | round) / 100)x its p99"'
fi

# plane MODE: the control plane with celer first in --authorization-config, caching off
# (nocache: every matched request reaches celer) or on (cache: the API server's defaults), and
# users bench-user and bench-reference (both bound to cluster-admin by RBAC), namespace
# policy-bench, and $work/user.kubeconfig and $work/reference.kubeconfig. The configuration's
# matchConditions are celer's, plus one that skips celer for bench-reference: the reference
# takes every other step of the same API server (authentication, RBAC, the matchConditions
# themselves), so the difference between the two is what celer adds.
user_token="$(openssl rand -hex 24)" reference_token="$(openssl rand -hex 24)"
{
  echo "$user_token,bench-user,bench-user,\"bench:users\""
  echo "$reference_token,bench-reference,bench-reference,\"bench:users\""
} > "$work/tokens.csv"
export CELER_E2E_EXTRA_TOKENS="$work/tokens.csv"
plane() {
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
  local cache=()
  [ "$1" = nocache ] && cache=(--no-cache)
  "$CELER_BIN" authz config --policy "$work/policies.yaml" "${cache[@]}" \
    --kubeconfig-file "$work/webhook.kubeconfig" > "$work/authorization-config-$1.celer.yaml"
  python3 - "$work/authorization-config-$1.celer.yaml" "$work/authorization-config-$1.yaml" <<'PY'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
webhook = config["authorizers"][0]["webhook"]
webhook.setdefault("matchConditions", []).append({"expression": "request.user != 'bench-reference'"})
yaml.safe_dump(config, open(sys.argv[2], "w"), sort_keys=False)
PY
  export CELER_E2E_AUTHORIZATION_CONFIG="$work/authorization-config-$1.yaml"
  eval "$("$here/control-plane.sh" up)"
  api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
    '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"bench-users-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"bench:users"}]}'
  [ "$status" = 201 ] || { echo "binding: $status" >&2; return 1; }
  api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"policy-bench"}}'
  local who t path
  for who in user reference; do
    t="$user_token"; [ "$who" = reference ] && t="$reference_token"
    sed -e "s/user: celer-e2e-admin/user: bench-$who/; s/name: celer-e2e-admin/name: bench-$who/" \
      -e "s/token: .*/token: $t/" "$KUBECONFIG" > "$work/$who.kubeconfig"
    chmod 600 "$work/$who.kubeconfig"
    # The mix's reads must be answered 200 before anything is measured.
    for path in /api/v1/namespaces/default/services/kubernetes /api/v1/namespaces/policy-bench/pods; do
      CELER_E2E_TOKEN="$t" api GET "$path"
      [ "$status" = 200 ] || { echo "bench-$who GET $path: $status $(head -c 300 "$work/body.json")" >&2; return 1; }
    done
  done
  # celer is called for bench-user and not for bench-reference (the floor keeps no metrics).
  [ "$AUTHORIZER" = floor ] && return 0
  local before after
  before="$(curl -s --cacert "$work/tls-served/ca.crt" "https://127.0.0.1:$celer_port/metrics" | awk '/^celer_webhook_requests_total\{endpoint="authorize"/ {n += $2} END {print n + 0}')"
  CELER_E2E_TOKEN="$reference_token" api GET /api/v1/namespaces/policy-bench/pods?limit=2
  after="$(curl -s --cacert "$work/tls-served/ca.crt" "https://127.0.0.1:$celer_port/metrics" | awk '/^celer_webhook_requests_total\{endpoint="authorize"/ {n += $2} END {print n + 0}')"
  [ "$before" = "$after" ] || { echo "bench-reference reached celer ($before -> $after reviews)" >&2; return 1; }
}

AUTHORIZER="${AUTHORIZER:-celer}" MODES="${MODES:-nocache cache}"
if want apiserver || want sweep; then
  case "$AUTHORIZER" in
    celer) start_celer served --policies "$work/policies.yaml" ;;
    floor) start_floor served ;;
    *) echo "AUTHORIZER: celer or floor, not $AUTHORIZER" >&2; exit 2 ;;
  esac
  cat > "$work/webhook.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: celer
  cluster:
    server: https://127.0.0.1:$celer_port/authorize
    certificate-authority: $work/tls-served/ca.crt
users:
- name: kube-apiserver
  user: {}
contexts:
- name: celer
  context: {cluster: celer, user: kube-apiserver}
current-context: celer
KC
fi

api_bench() { # WHO NAME ARGS...: the mix through the API server as bench-WHO, in $work/api-NAME.json
  local who="$1" name="$2"; shift 2
  "$CELER_BIN" bench --kube --kubeconfig "$work/$who.kubeconfig" --authz-mix \
    --max-concurrency "$API_CONCURRENCY" --warmup-rate 20 --warmup-duration 3s \
    --output json --quiet "$@" > "$work/api-$name.json"
}

ROUNDS="${ROUNDS:-3}"
# added NAME: rounds of reference and celer at the same rate, interleaved; prints each round
# and the medians of the per-round differences.
added() {
  local mode="$1" rate="$2" duration="$3" r
  for r in $(seq 1 "$ROUNDS"); do
    api_bench reference "$mode-$rate-ref-$r" --rate "$rate" --duration "$duration"
    api_bench user "$mode-$rate-celer-$r" --rate "$rate" --duration "$duration" --pid "$celer_pid"
  done
  jq -rn --arg mode "$mode" --arg who "$AUTHORIZER" --argjson rate "$rate" --argjson rounds "$ROUNDS" \
    --slurpfile ref <(for r in $(seq 1 "$ROUNDS"); do cat "$work/api-$mode-$rate-ref-$r.json"; done) \
    --slurpfile cel <(for r in $(seq 1 "$ROUNDS"); do cat "$work/api-$mode-$rate-celer-$r.json"; done) '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def us: . * 1000 | round;
    [range(0; $rounds) as $i | {ref: $ref[$i].run, cel: $cel[$i].run}] as $rows
    | ($rows | to_entries[] | "\($mode) \($rate)/s round \(.key + 1): reference p50 \(.value.ref.scheduled.p50) p99 \(.value.ref.scheduled.p99) ms; \($who) p50 \(.value.cel.scheduled.p50) p99 \(.value.cel.scheduled.p99) ms; failed \(.value.ref.requests - .value.ref.successful) / \(.value.cel.requests - .value.cel.successful)"),
      "\($mode) \($rate)/s: added p50 \([$rows[] | .cel.scheduled.p50 - .ref.scheduled.p50] | median | us) us, added p99 \([$rows[] | .cel.scheduled.p99 - .ref.scheduled.p99] | median | us) us (medians of \($rounds) rounds); \($who) \([$rows[] | .cel.resources.cpu_cores.mean] | median) cores"'
}

# where the added time goes: celer's own time per review (its histogram, from reading the body
# to writing the answer) and the API server's time per webhook call (its histogram), means over
# the plane's life.
where() {
  local c a
  c="$(curl -s --cacert "$work/tls-served/ca.crt" "https://127.0.0.1:$celer_port/metrics" | awk '
    /^celer_webhook_request_duration_seconds_sum\{endpoint="authorize"/ {s += $2}
    /^celer_webhook_request_duration_seconds_count\{endpoint="authorize"/ {n += $2}
    END {if (n) printf "%d reviews, mean %.0f us", n, s / n * 1e6}')"
  api GET /metrics
  a="$(awk '
    /^apiserver_authorization_webhook_duration_seconds_sum/ {s += $2}
    /^apiserver_authorization_webhook_duration_seconds_count/ {n += $2}
    END {if (n) printf "%d calls, mean %.0f us", n, s / n * 1e6}' "$work/body.json")"
  echo "$1: celer's own time: ${c:-none}; the API server's webhook calls: ${a:-none}"
}

if want apiserver; then
  for mode in $MODES; do
    plane "$mode"
    added "$mode" "$API_RATE" "$API_DURATION"
    where "$mode"
  done
fi

if want sweep; then
  plane nocache
  for rate in ${SWEEP//,/ }; do
    ROUNDS=1 added sweep "$rate" 20s | tee "$work/sweep-$rate.txt"
    if ! grep -q "added p99" "$work/sweep-$rate.txt"; then break; fi
    p99="$(grep -o 'added p99 -\?[0-9]*' "$work/sweep-$rate.txt" | grep -o -- '-\?[0-9]*$')"
    failed="$(jq '.run.requests - .run.successful' "$work/api-sweep-$rate-celer-1.json")"
    if [ "$p99" -ge 5000 ] || [ "$failed" -gt 0 ]; then
      echo "sweep: added p99 reached 5 ms (or requests failed) at $rate/s"; break
    fi
    echo "sweep: $rate/s within 5 ms added p99"
  done
fi
