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
# apiserver  the mix through kube-apiserver as bench-user (bound to cluster-admin by RBAC): 75%
#            GETs (list Pods, get the kubernetes Service, list Namespaces), 25% dry-run Pod
#            creates, at 75 rps, 20 concurrent, 60 s. Three API servers, one after another:
#            RBAC only (the reference); celer first in --authorization-config with caching off
#            (every request reaches celer); celer first with the API server's default caching.
#            The added p99 is (celer) - (RBAC only).
# sweep      the same mix at rising rates on the reference and on celer (caching off); per
#            rate the added p99, and the highest rate whose added p99 stays under 5 ms.
#
# Environment: CELER_BIN [target/release/celer, built if missing]; RATE [5000], DURATION [30s],
# API_RATE [75], API_DURATION [60s], API_CONCURRENCY [20], SWEEP [75,150,300,600,1000,1500];
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
# The reference: one policy for a resource the mix never asks about, so no review is evaluated
# (celer refuses an empty policy file) and every answer is NoOpinion.
python3 "$here/authz-bench-policies.py" --cel 0 --rego 0 --other 1 > "$work/none.yaml"

# p99 and the rest of a report, one line: NAME FILE
summary() {
  jq -r --arg name "$1" '.run as $r | "\($name): \($r.requests) requests at \($r.achieved_rps|floor)/s, scheduled p50 \($r.scheduled.p50) p99 \($r.scheduled.p99) p99.9 \($r.scheduled.p999) max \($r.scheduled.max) ms; http p99 \($r.http.p99) ms; failed \($r.requests - $r.successful); behind schedule \($r.behind_schedule)" + (if $r.resources then "; celer \($r.resources.cpu_cores.mean) cores, \($r.resources.rss_mib.p95) MiB" else "" end)' "$2"
}

if want webhook; then
  for set in none policies policies-1000-other; do
    start_celer "$set" --policies "$work/$set.yaml"
    "$CELER_BIN" bench --target "https://127.0.0.1:$celer_port/authorize" \
      --ca "$work/tls-$set/ca.crt" --authz-mix --rate "$RATE" --duration "$DURATION" \
      --warmup-rate 1000 --warmup-duration 5s --max-concurrency 64 --pid "$celer_pid" \
      --output json --quiet > "$work/webhook-$set.json"
    summary "webhook, $set" "$work/webhook-$set.json"
    stop_celer TERM
  done
  jq -rn --slurpfile n "$work/webhook-none.json" --slurpfile p "$work/webhook-policies.json" \
    --slurpfile o "$work/webhook-policies-1000-other.json" '
    def r(x): (x[0].run.scheduled.p99);
    "webhook: scheduled p99 with the 54 policies \(r($p)) ms, \((r($p) / r($n) * 100 | round) / 100)x no policies (\(r($n)) ms); with 1,000 more for other resources \(r($o)) ms, \((r($o) / r($p) * 100 | round) / 100)x",
    "webhook: celer cores per 1,000 SAR/s: \(($p[0].run.resources.cpu_cores.mean / ($p[0].run.achieved_rps / 1000) * 1000 | round) / 1000) (no policies: \(($n[0].run.resources.cpu_cores.mean / ($n[0].run.achieved_rps / 1000) * 1000 | round) / 1000))"'
fi

# plane MODE: the control plane with RBAC only (rbac) or celer first (nocache, cache), with
# bench-user's token and binding, namespace policy-bench, and $work/user.kubeconfig.
token="$(openssl rand -hex 24)"
echo "$token,bench-user,bench-user,\"bench:users\"" > "$work/tokens.csv"
export CELER_E2E_EXTRA_TOKENS="$work/tokens.csv"
plane() {
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
  unset CELER_E2E_AUTHORIZATION_CONFIG
  if [ "$1" != rbac ]; then
    local cache=()
    [ "$1" = nocache ] && cache=(--no-cache)
    "$CELER_BIN" authz config --policy "$work/policies.yaml" "${cache[@]}" \
      --kubeconfig-file "$work/webhook.kubeconfig" > "$work/authorization-config-$1.yaml"
    export CELER_E2E_AUTHORIZATION_CONFIG="$work/authorization-config-$1.yaml"
  fi
  eval "$("$here/control-plane.sh" up)"
  api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
    '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"bench-users-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"bench:users"}]}'
  [ "$status" = 201 ] || { echo "binding: $status" >&2; return 1; }
  api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"policy-bench"}}'
  sed -e "s/user: celer-e2e-admin/user: bench-user/; s/name: celer-e2e-admin/name: bench-user/" \
    -e "s/token: .*/token: $token/" "$KUBECONFIG" > "$work/user.kubeconfig"
  chmod 600 "$work/user.kubeconfig"
  # The mix's reads must be answered 200 before anything is measured.
  local path
  for path in /api/v1/namespaces/default/services/kubernetes /api/v1/namespaces/policy-bench/pods; do
    CELER_E2E_TOKEN="$token" api GET "$path"
    [ "$status" = 200 ] || { echo "bench-user GET $path: $status $(head -c 300 "$work/body.json")" >&2; return 1; }
  done
}

if want apiserver || want sweep; then
  start_celer served --policies "$work/policies.yaml"
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

api_bench() { # NAME ARGS...: the mix through the API server, report in $work/api-NAME.json
  local name="$1"; shift
  "$CELER_BIN" bench --kube --kubeconfig "$work/user.kubeconfig" --authz-mix \
    --max-concurrency "$API_CONCURRENCY" --warmup-rate 20 --warmup-duration 5s \
    --output json --quiet "$@" > "$work/api-$name.json"
}

if want apiserver; then
  for mode in rbac nocache cache; do
    plane "$mode"
    pid_args=()
    [ "$mode" != rbac ] && pid_args=(--pid "$celer_pid")
    api_bench "$mode" --rate "$API_RATE" --duration "$API_DURATION" "${pid_args[@]}"
    summary "apiserver, $mode" "$work/api-$mode.json"
  done
  jq -rn --slurpfile a "$work/api-rbac.json" --slurpfile b "$work/api-nocache.json" \
    --slurpfile c "$work/api-cache.json" '
    def p(x; q): (x[0].run.scheduled[q]);
    "apiserver: added p50 / p99 with celer, caching off: \((p($b; "p50") - p($a; "p50")) * 1000 | round) / \((p($b; "p99") - p($a; "p99")) * 1000 | round) us; caching on: \((p($c; "p50") - p($a; "p50")) * 1000 | round) / \((p($c; "p99") - p($a; "p99")) * 1000 | round) us (reference p50 \(p($a; "p50")) ms, p99 \(p($a; "p99")) ms)"'
fi

if want sweep; then
  for mode in rbac nocache; do
    plane "$mode"
    api_bench "sweep-$mode" --rate-sweep "$SWEEP" --slo-ms 1000 --duration 20s
  done
  jq -rn --slurpfile a "$work/api-sweep-rbac.json" --slurpfile b "$work/api-sweep-nocache.json" '
    [range(0; [$a[0].sweep.steps, $b[0].sweep.steps] | map(length) | min) as $i
     | {rate: $a[0].sweep.steps[$i].summary.rate,
        ref: $a[0].sweep.steps[$i].summary.scheduled.p99,
        celer: $b[0].sweep.steps[$i].summary.scheduled.p99,
        failed: ($b[0].sweep.steps[$i].summary | .requests - .successful)}
     | .added = ((.celer - .ref) * 1000 | round) / 1000] as $rows
    | ($rows[] | "sweep: \(.rate)/s: p99 reference \(.ref) ms, celer \(.celer) ms, added \(.added) ms, failed \(.failed)"),
      "sweep: highest rate with added p99 under 5 ms: \([$rows[] | select(.added < 5 and .failed == 0) | .rate] | max)"'
fi
