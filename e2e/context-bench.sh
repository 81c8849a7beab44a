#!/usr/bin/env bash
# Issue 20's through-the-API-server target: what one policy reading a ConfigMap with
# Kyverno's resource.Get (e2e/policies/context-get.yaml, answered from celer's watch cache)
# adds to a Pod create at 200 rps, against the same API server with no policy at all. ROUNDS
# (default 3) alternate the two (e2e/bench-env.sh none, then celer); each run is `celer bench
# --kube`: a 10 s warm-up at 50 rps, then COUNT (default 6,000) dry-run Pod CREATEs at 200
# rps, at most 128 in flight, all expected allowed. The summary gives p50/p95/p99 per run and
# the added p95 (celer's minus the none run's of the same round), with the median over rounds.
#
#   e2e/context-bench.sh                    # about 6 minutes
#   ROUNDS=1 COUNT=2000 e2e/context-bench.sh
#
# CELER_BIN: the celer used to bench and to serve [target/release/celer, built if missing].
# Results in target/e2e/context-bench/ (none-N.json, celer-N.json, summary.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
ROUNDS="${ROUNDS:-3}" COUNT="${COUNT:-6000}"
out="${OUT:-$repo/target/e2e/context-bench}"
export CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
[ -x "$CELER_BIN" ] || (cd "$repo" && cargo build --release -p celer)
rm -rf "$out"; mkdir -p "$out"
# Inside bench-env: the ConfigMap the policy reads (admitted before any policy reads it),
# then the run.
bench='curl -sS -o /dev/null --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
  -H "Content-Type: application/json" -X POST "$CELER_E2E_SERVER/api/v1/namespaces/policy-bench/configmaps" \
  --data-binary '"'"'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-settings"},"data":{"mode":"open"}}'"'"'
"$CELER_BIN" bench --kube --kubeconfig "$KUBECONFIG" --namespace policy-bench \
  --warmup-duration 10s --warmup-rate 50 --rate 200 --count "$COUNT" --max-concurrency 128 \
  --expect allowed --quiet --output json'
# After celer's run, the policy is shown to be in force: the ConfigMap set to locked, Pods
# are denied (within 10 s, as the watch brings the change).
enforced='curl -sS -o /dev/null --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
  -H "Content-Type: application/merge-patch+json" -X PATCH "$CELER_E2E_SERVER/api/v1/namespaces/policy-bench/configmaps/bench-settings" \
  --data-binary '"'"'{"data":{"mode":"locked"}}'"'"'
for _ in $(seq 1 20); do
  if "$CELER_BIN" bench --kube --kubeconfig "$KUBECONFIG" --namespace policy-bench --rate 5 --count 3 \
      --expect denied --quiet --output json 2>/dev/null | jq -e ".run.errors.mismatch == 0 and .run.successful == 3" >/dev/null; then
    echo "context-bench: the policy is in force: with the ConfigMap locked, Pods are denied" >&2; exit 0
  fi
  sleep 0.5
done
echo "context-bench: the policy did not deny with the ConfigMap locked" >&2; exit 1'
export COUNT
for r in $(seq 1 "$ROUNDS"); do
  echo "context-bench: round $r: none" >&2
  "$here/bench-env.sh" none -- bash -c "$bench" > "$out/none-$r.json"
  echo "context-bench: round $r: celer" >&2
  "$here/bench-env.sh" celer "$here/policies/context-get.yaml" -- bash -c "$bench && { $enforced; } >&2" > "$out/celer-$r.json"
done
python3 - "$out" "$ROUNDS" > "$out/summary.md" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def run(name):
    return json.load(open(f"{out}/{name}.json"))["run"]
print("| round | run | successful | mismatches | p50 ms | p95 ms | p99 ms | achieved rps | added p95 ms |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
added = []
for r in range(1, rounds + 1):
    none, celer = run(f"none-{r}"), run(f"celer-{r}")
    added.append(celer["http"]["p95"] - none["http"]["p95"])
    for name, x, a in (("none", none, ""), ("celer, 1 resource.Get policy", celer, f"{added[-1]:+.3f}")):
        print(f"| {r} | {name} | {x['successful']} | {x['errors']['mismatch']} | {x['http']['p50']:.3f} | "
              f"{x['http']['p95']:.3f} | {x['http']['p99']:.3f} | {x['achieved_rps']:.1f} | {a} |")
print()
print(f"- added p95, median over rounds: {statistics.median(added):+.3f} ms (target: under 2 ms)")
PY
cat "$out/summary.md"
