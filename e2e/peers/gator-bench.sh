#!/usr/bin/env bash
# `gator bench`, Gatekeeper's own benchmark, against celer on the same inputs (issue 15
# item 3, issue 18): the gatekeeper-library templates with CEL code (ENGINE=cel, the default)
# or with Rego (ENGINE=rego: all 49, their CEL entries removed so both engines run the Rego),
# their sample Constraints and their cases' objects (e2e/peers/gator-inputs.py). ROUNDS
# (default 3) alternate gator (`--engine $ENGINE`) and celer
# (crates/offline/benches/gator_inputs.rs), each ITERATIONS rounds
# over every object (default 100: 11,100 reviews per run; gator takes about half a second per
# round here) after 10 warm-up rounds, one review timed at a time.
# Both must find the same violations per round; the summary table gives mean, p50, p95, p99
# per review and reviews per second, per run, and celer / gator of the medians; the script
# exits 1 when the violations differ.
#
#   e2e/peers/gator-bench.sh                  # builds gator once (e2e/peers/build.sh gator)
#   ROUNDS=1 ITERATIONS=100 e2e/peers/gator-bench.sh
#   ENGINE=rego ITERATIONS=20 e2e/peers/gator-bench.sh
#
# Results in target/e2e/peers/gator[-rego]/ (gator-N.json, celer-N.json, summary.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ROUNDS="${ROUNDS:-3}" ITERATIONS="${ITERATIONS:-100}" ENGINE="${ENGINE:-cel}"
case "$ENGINE" in
  cel) out="${OUT:-$repo/target/e2e/peers/gator}" ;;
  rego) out="${OUT:-$repo/target/e2e/peers/gator-rego}" ;;
  *) echo "error: ENGINE is cel or rego, not $ENGINE" >&2; exit 2 ;;
esac
gator="$("$here/build.sh" gator)/bin/gator"
rm -rf "$out"; mkdir -p "$out"
"$here/gator-inputs.py" --engine "$ENGINE" "$repo/../shared/corpus" "$out/inputs"
(cd "$repo" && cargo bench -p celer-offline --bench gator_inputs --no-run 2>/dev/null) \
  || (cd "$repo" && cargo bench -p celer-offline --bench gator_inputs --no-run)
for r in $(seq 1 "$ROUNDS"); do
  echo "gator-bench: round $r: gator" >&2
  "$gator" bench -f "$out/inputs" --engine "$ENGINE" -n "$ITERATIONS" --warmup 10 -o json \
    > "$out/gator-$r.json" 2> "$out/gator-$r.log"
  echo "gator-bench: round $r: celer" >&2
  (cd "$repo" && CELER_GATOR_INPUTS="$out/inputs" cargo bench -q -p celer-offline \
    --bench gator_inputs -- --engine "$ENGINE" --iterations "$ITERATIONS" --warmup 10) > "$out/celer-$r.json"
done
python3 - "$out" "$ROUNDS" > "$out/summary.md" <<'PY'
import json, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
def ns(d):
    """A Go duration (a string such as 4.64173ms, or integer nanoseconds) in nanoseconds."""
    if isinstance(d, (int, float)):
        return float(d)
    parts = re.findall(r"([0-9.]+)(ns|us|µs|μs|ms|s|m|h)", d)
    if not parts:
        raise ValueError(f"not a duration: {d!r}")
    return sum(float(v) * UNITS[u] for v, u in parts)
def gator(r):
    data = json.load(open(f"{out}/gator-{r}.json"))
    res = data[0] if isinstance(data, list) else data
    lat = res["latencies"]
    return {"templates": res["templateCount"], "constraints": res["constraintCount"],
            "objects": res["objectCount"], "violations": res["violationCount"] // res["iterations"],
            "mean": ns(lat["mean"]), "p50": ns(lat["p50"]), "p95": ns(lat["p95"]),
            "p99": ns(lat["p99"]), "rps": res["reviewsPerSecond"],
            "skipped": res.get("skippedTemplates") or []}
def celer(r):
    res = json.loads(open(f"{out}/celer-{r}.json").read().strip().splitlines()[-1])
    lat = res["latencies"]
    return {"templates": res["templateCount"], "constraints": res["constraintCount"],
            "objects": res["objectCount"], "violations": res["violationsPerRound"],
            "mean": lat["mean"], "p50": lat["p50"], "p95": lat["p95"], "p99": lat["p99"],
            "rps": res["reviewsPerSecond"], "skipped": []}
rows = {"gator": [gator(r) for r in range(1, rounds + 1)],
        "celer": [celer(r) for r in range(1, rounds + 1)]}
us = lambda ns: f"{ns / 1000:.2f}"
print("| engine | round | templates | constraints | objects | violations per round | mean µs | p50 µs | p95 µs | p99 µs | reviews/s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for engine, runs in rows.items():
    for i, x in enumerate(runs, 1):
        print(f"| {engine} | {i} | {x['templates']} | {x['constraints']} | {x['objects']} | {x['violations']} | "
              f"{us(x['mean'])} | {us(x['p50'])} | {us(x['p95'])} | {us(x['p99'])} | {x['rps']:.0f} |")
med = lambda e, k: statistics.median(x[k] for x in rows[e])
print()
for k in ("mean", "p50", "p95", "p99"):
    print(f"- {k}: celer / gator = {med('celer', k) / med('gator', k):.4f} "
          f"({us(med('celer', k))} µs vs {us(med('gator', k))} µs, medians of the rounds)")
print(f"- reviews/s: celer / gator = {med('celer', 'rps') / med('gator', 'rps'):.1f}x")
same = {x["violations"] for x in rows["gator"]} == {x["violations"] for x in rows["celer"]}
print(f"- violations per round: gator {sorted({x['violations'] for x in rows['gator']})}, "
      f"celer {sorted({x['violations'] for x in rows['celer']})}: {'the same' if same else 'DIFFERENT'}")
if rows["gator"][0]["skipped"]:
    print(f"- gator skipped templates: {', '.join(rows['gator'][0]['skipped'])}")
PY
cat "$out/summary.md"
# The figures only compare like with like if both engines found the same violations.
if grep -q "DIFFERENT" "$out/summary.md"; then
  echo "gator-bench: gator and celer found different violations (see above)" >&2
  exit 1
fi
