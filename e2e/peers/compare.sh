#!/usr/bin/env bash
# The comparison of issue 15, item 2: the standard method through kube-apiserver (12,000
# dry-run Pod CREATEs at 200 rps, at most 128 in flight, after a 15 s warm-up at 50 rps) for
# five configurations on one control plane, in one session, for two policy sets:
#
#   none        no admission policy at all
#   native      kube-apiserver's own MutatingAdmissionPolicy / ValidatingAdmissionPolicy
#   gatekeeper  Gatekeeper (e2e/peers/peer.sh) and its own kinds
#   kyverno     Kyverno's admission controller and its CEL kinds
#   celer       celer serving the native files as a registered webhook
#   floor       (only when named in CONFIGS) the serving floor: celer's TLS and HTTP stack with
#               no engine, registered as celer's webhooks are, allowing everything: what any
#               webhook built this way costs here (no cases, no denial check)
#
#   contract      policies/bench-contract (native, celer); e2e/peers/policies/kyverno (a
#                 MutatingPolicy + a ValidatingPolicy); e2e/peers/policies/gatekeeper (a Rego
#                 ConstraintTemplate + Constraint, an AssignMetadata)
#   pod-security  policies/pod-security (native, celer: 19 VAPs); Kyverno's pod-security
#                 vpol set (16) and gatekeeper-library's pod-security-policy templates (15),
#                 both written from the corpus by e2e/peers/pod-security.py
#
# Each trial runs every configuration once, in an order shuffled per set and trial (TRIALS,
# default 3; SEED fixes the shuffle); each configuration is set up afresh (bench-env.sh: the
# peer started, its policies applied and enforced, then stopped and removed). Before its load,
# every configuration but none must pass the contract's 180 API-mode correctness cases
# (`celer bench cases contract-api`); one that fails them is reported, not measured. Kyverno
# answers a denial without a status code, so the API server sends its client 400 where the
# others send 403: Kyverno's cases expect 400 (nothing else differs). Every run of a policy set
# first checks that 5 noncompliant Pods are denied.
#
#   e2e/peers/compare.sh                    # 2 sets x 3 trials x 5 configurations (~1 h 45 min)
#   QUICK=1 TRIALS=1 e2e/peers/compare.sh   # 2 s warm-up, 600 requests: a smoke run
#   SETS=contract CONFIGS="none celer kyverno" e2e/peers/compare.sh
#   SETS=contract CONFIGS="none floor celer kyverno" e2e/peers/compare.sh
#
# Results in target/e2e/peers/: per run SET-CONFIG-tTRIAL.json (celer bench) and .celer.json
# (the engine process's CPU and RSS, sampled once a second over the measured phase: celer's,
# Kyverno's or Gatekeeper's), loadavg.txt, order.txt, summary.md (per-trial and pooled tables,
# the ratios) and SET.svg.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(cd "$here/.." && pwd)"
repo="$(cd "$e2e/.." && pwd)"
export OUT="${OUT:-$repo/target/e2e/peers}"
export CELER_E2E_WORK="$OUT/work"
TRIALS="${TRIALS:-3}"
CONFIGS="${CONFIGS:-none native gatekeeper kyverno celer}"
SETS="${SETS:-contract pod-security}"
if [ -n "${QUICK:-}" ]; then WARMUP=2s; COUNT=${COUNT:-600}; else WARMUP=15s; COUNT=${COUNT:-12000}; fi
export WARMUP
export CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
if [ ! -x "$CELER_BIN" ]; then (cd "$repo" && cargo build --release -p celer); fi
# Both peers are built before anything is measured (minutes each when cold).
for engine in kyverno gatekeeper; do
  case " $CONFIGS " in *" $engine "*) "$here/build.sh" "$engine" >/dev/null ;; esac
done

mkdir -p "$OUT" "$CELER_E2E_WORK"
rm -f "$OUT"/*.json "$OUT"/*.svg "$OUT/loadavg.txt" "$OUT/summary.md" "$OUT/order.txt"
"$CELER_BIN" bench cases contract-api > "$OUT/contract-api-cases.jsonl"
jq -c 'if .expect.code == 403 then .expect.code = 400 else . end' "$OUT/contract-api-cases.jsonl" \
  > "$OUT/contract-api-cases.kyverno.jsonl"

export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
started=0
if ! "$e2e/control-plane.sh" status >/dev/null 2>&1; then
  "$e2e/control-plane.sh" up > "$CELER_E2E_WORK/env.sh"
  started=1
fi
cleanup() {
  "$here/peer.sh" stop kyverno >/dev/null 2>&1 || true
  "$here/peer.sh" stop gatekeeper >/dev/null 2>&1 || true
  if [ "$started" = 1 ]; then "$e2e/control-plane.sh" down; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC1091
source <("$e2e/control-plane.sh" env)
for ns in policy-bench policy-bench-staging; do
  curl -sS -o /dev/null --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    -H "Content-Type: application/json" -X POST "$CELER_E2E_SERVER/api/v1/namespaces" \
    --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
{
  echo "kube-apiserver $(curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    "$CELER_E2E_SERVER/version" | jq -r .gitVersion); $(nproc) cores; celer $("$CELER_BIN" --version)"
  echo "peers: $(grep -v '^#' "$here/versions" | tr '\n' ' ')"
} > "$OUT/machine.txt"

# paths_of SET CONFIG: the policy files of CONFIG for SET.
paths_of() {
  case "$1:$2" in
    *:none|*:floor) ;;
    contract:native|contract:celer) echo "$repo/policies/bench-contract" ;;
    contract:*) echo "$here/policies/$2" ;;
    pod-security:native|pod-security:celer) echo "$repo/policies/pod-security" ;;
    pod-security:*) echo "$OUT/pod-security/$2" ;;
  esac
}

case " $SETS " in *" pod-security "*) "$here/pod-security.py" "$repo/../shared/corpus" "$OUT/pod-security" ;; esac

failed=()
seed="${SEED:-$RANDOM}"
for set in $SETS; do
  for trial in $(seq 1 "$TRIALS"); do
    # shellcheck disable=SC2086
    order="$(python3 -c 'import random, sys; r = random.Random(sys.argv[1]); c = sys.argv[2:]; r.shuffle(c); print(" ".join(c))' "$seed-$set-$trial" $CONFIGS)"
    echo "$set, trial $trial: $order" | tee -a "$OUT/order.txt" >&2
    for config in $order; do
      name="$set-$config-t$trial"
      # The contract's correctness cases before its load; the Pod Security set has none (its
      # noncompliant Pods must still be denied, and every load Pod admitted).
      cases=no
      [ "$set" = contract ] && [ "$config" != none ] && [ "$config" != floor ] && cases=yes
      export CASES_FILE="$OUT/contract-api-cases.jsonl"
      [ "$config" = kyverno ] && CASES_FILE="$OUT/contract-api-cases.kyverno.jsonl"
      echo "== compare: $name, $COUNT requests" >&2
      policies=yes
      [ "$config" = none ] || [ "$config" = floor ] && policies=no
      # shellcheck disable=SC2046
      if ! POLICIES="$policies" FAIL_ON_MISMATCH=1 "$e2e/bench-env.sh" "$config" $(paths_of "$set" "$config") -- \
          "$e2e/side-by-side.sh" __run "$name" "$cases" "$COUNT"; then
        failed+=("$name")
        echo "compare: $name did not complete (see above); it is reported as such" >&2
      fi
    done
  done
done

for set in $SETS; do
  python3 "$here/summary.py" "$OUT" "$set" "$CONFIGS" "$TRIALS"
done > "$OUT/summary.md"
{
  echo
  cat "$OUT/machine.txt"
  echo
  echo "order of the runs:"
  sed 's/^/    /' "$OUT/order.txt"
  echo
  echo "load average (1, 5, 15 min) before and after each run:"
  sed 's/^/    /' "$OUT/loadavg.txt"
  [ ${#failed[@]} -eq 0 ] || echo "runs that did not complete: ${failed[*]}"
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
