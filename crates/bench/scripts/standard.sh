#!/usr/bin/env bash
# The standard method of issue 7 (docs/benchmarks.md, "celer serve under open-loop load"):
# `celer serve` (release) with (a) no policies, (b) the embedded Pod Security default, (c) the
# bench contract; for (c) the 180 correctness cases first; a 15 s warm-up at 50 rps, then
# 12,000 valid small-Pod CREATEs at 200 rps with at most 128 in flight, --pid on the server.
# Then the rate sweep (scheduled p99 < 10 ms) against (b) and (c).
#
#   bash crates/bench/scripts/standard.sh            # everything (about 8 minutes)
#   QUICK=1 bash crates/bench/scripts/standard.sh    # 2 s warm-up, 1,000 requests, short sweep
#
# Results: target/bench-standard/*.json (celer bench --output json) and summary.md (tables).
# Only loopback addresses are used; every server started here is stopped by its pid.
set -euo pipefail
cd "$(dirname "$0")/../../.."

OUT=${OUT:-target/bench-standard}
PORT=${PORT:-18443}
SWEEP=${SWEEP:-2000,4000,6000,8000,10000,12000,14000,16000,18000,20000}
SWEEP_DURATION=${SWEEP_DURATION:-5s}
if [[ -n "${QUICK:-}" ]]; then
  WARMUP=2s; COUNT=1000; SWEEP=${SWEEP_QUICK:-2000,10000}; SWEEP_DURATION=2s
else
  WARMUP=15s; COUNT=12000
fi

cargo build --release -p celer
CELER=target/release/celer
mkdir -p "$OUT/empty-policies"
rm -f "$OUT"/*.json "$OUT/loadavg.txt"
"$CELER" bench cases contract > "$OUT/contract-cases.jsonl"

SERVER=""
stop_server() {
  if [[ -n "$SERVER" ]]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
  fi
}
trap stop_server EXIT

# start_server NAME [serve flags...]: starts celer serve on loopback and waits until ready.
start_server() {
  local name=$1; shift
  rm -rf "$OUT/tls-$name"
  "$CELER" serve --listen "127.0.0.1:$PORT" --tls-dir "$OUT/tls-$name" --log-level warn "$@" \
    2> "$OUT/serve-$name.log" &
  SERVER=$!
  for _ in $(seq 1 200); do
    if [[ -f "$OUT/tls-$name/ca.crt" ]] &&
       curl -sf --cacert "$OUT/tls-$name/ca.crt" "https://127.0.0.1:$PORT/readyz" >/dev/null; then
      return 0
    fi
    sleep 0.05
  done
  echo "celer serve ($name) did not become ready; see $OUT/serve-$name.log" >&2
  exit 1
}

# standard NAME PATH [bench flags...]: the standard run against the server started last.
standard() {
  local name=$1 path=$2; shift 2
  echo "== $name: $path" >&2
  echo "$name$path: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  "$CELER" bench --target "https://127.0.0.1:$PORT$path" --ca "$OUT/tls-$name/ca.crt" \
    --warmup-rate 50 --warmup-duration "$WARMUP" --rate 200 --count "$COUNT" \
    --max-concurrency 128 --expect allowed --pid "$SERVER" --output json "$@" \
    > "$OUT/$name${path//\//-}.json"
}

sweep() {
  local name=$1 path=$2; shift 2
  echo "== sweep $name: $path" >&2
  echo "sweep $name$path: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  "$CELER" bench --target "https://127.0.0.1:$PORT$path" --ca "$OUT/tls-$name/ca.crt" \
    --warmup-rate 1000 --warmup-duration 3s --rate-sweep "$SWEEP" --duration "$SWEEP_DURATION" \
    --slo-ms 10 --max-concurrency 128 --expect allowed --pid "$SERVER" --output json "$@" \
    > "$OUT/sweep-$name${path//\//-}.json"
}

start_server a-none --policies "$OUT/empty-policies"
standard a-none /validate
stop_server

start_server b-default
standard b-default /validate
sweep b-default /validate
stop_server

start_server c-contract --policies policies/bench-contract
standard c-contract /validate --cases "$OUT/contract-cases.jsonl" --fail-on-mismatch
standard c-contract /mutate
sweep c-contract /validate
stop_server

python3 - "$OUT" > "$OUT/summary.md" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("| configuration | correctness | successful | p50 ms | p95 ms | p99 ms | scheduled p95 ms | queue p95 ms | achieved RPS | CPU cores (mean / p95) | RSS MiB (mean / p95) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for f in sorted(out.glob("[abc]-*.json")):
    d = json.loads(f.read_text())
    r = d["run"]
    c = d["correctness"]
    corr = f"{c['passed']}/{c['cases']}" if c else "-"
    res = r.get("resources") or {}
    cpu = res.get("cpu_cores", {}); rss = res.get("rss_mib", {})
    print(f"| {f.stem} | {corr} | {r['successful']} / {r['requests']} | {r['http']['p50']:.3f} | {r['http']['p95']:.3f} | "
          f"{r['http']['p99']:.3f} | {r['scheduled']['p95']:.3f} | {r['queue']['p95']:.3f} | {r['achieved_rps']:.1f} | "
          f"{cpu.get('mean', 0):.3f} / {cpu.get('p95', 0):.3f} | {rss.get('mean', 0):.1f} / {rss.get('p95', 0):.1f} |")
print()
print("| sweep | rate | achieved RPS | http p99 ms | queue p99 ms | scheduled p99 ms | failed | SLO | server CPU cores (mean) |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
for f in sorted(out.glob("sweep-*.json")):
    d = json.loads(f.read_text())
    s = d["sweep"]
    for step in s["steps"]:
        m = step["summary"]
        failed = sum(m["errors"].values())
        cpu = (m.get("resources") or {}).get("cpu_cores", {}).get("mean", 0)
        print(f"| {f.stem} | {m['rate']:.0f} | {m['achieved_rps']:.1f} | {m['http']['p99']:.3f} | {m['queue']['p99']:.3f} | "
              f"{m['scheduled']['p99']:.3f} | {failed} | {'met' if step['within_slo'] else 'missed'} | {cpu:.3f} |")
    print(f"| {f.stem} | **highest rate with scheduled p99 < {s['slo_ms']} ms: {s['best_rate']}** | | | | | | | |")
PY
echo >> "$OUT/summary.md"
echo "load average (1, 5, 15 min) before each run; the machine has 2 cores:" >> "$OUT/summary.md"
sed 's/^/    /' "$OUT/loadavg.txt" >> "$OUT/summary.md"
cat "$OUT/summary.md"
