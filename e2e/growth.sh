#!/usr/bin/env bash
# How the cost of one admission grows (issue 15 item 4, the shape of the Romana
# network-policy table): one policy that matches the request and K = 0, 10, 50, 100, 200,
# 1,000 that do not (e2e/growth.py: half for other resources, half for Pods in a namespace
# that does not exist), for Pod bodies of 0.5 KB, 1 KB, 10 KB, 100 KB and 1 MB.
#
#   e2e/growth.sh webhook    celer serve alone (files), celer bench --target over loopback TLS
#   e2e/growth.sh kube       through kube-apiserver (e2e control plane): the same policies
#                            natively, then served by celer as its webhook (bench-env.sh)
#   e2e/growth.sh            both
#
# Each point: RATE requests per second for DURATION (default 100/s for 5 s, after a 1 s
# warm-up), `--expect allowed`, bodies used in turn from 64 of that size. The tables give p50
# and p99 in ms and, per body size, p50 as a multiple of the K = 0 run's (the target: 1,000
# non-matching policies add at most 5% for celer at every size).
# COUNTS and SIZES (bytes) override the grids. Results in target/e2e/growth/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
what="${1:-both}"
out="${OUT:-$repo/target/e2e/growth}"
COUNTS="${COUNTS:-0 10 50 100 200 1000}"
SIZES="${SIZES:-512 1024 10240 102400 1048576}"
RATE="${RATE:-100}" DURATION="${DURATION:-5s}"
export CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
if [ ! -x "$CELER_BIN" ]; then (cd "$repo" && cargo build --release -p celer); fi
bench_args=(--requests BODIES --rate "$RATE" --duration "$DURATION" --warmup-rate "$RATE"
  --warmup-duration 1s --max-concurrency 64 --expect allowed --quiet --output json)

# point NAME ARGS...: one bench run per body size into $out/NAME-SIZE.json.
point() {
  local name="$1" s; shift
  for s in $SIZES; do
    local args=("${bench_args[@]}")
    args[1]="$out/bodies-$s.jsonl"
    "$CELER_BIN" bench "$@" "${args[@]}" > "$out/$name-$s.json"
    echo "growth: $name size $s: p50 $(jq -r '.run.http.p50' "$out/$name-$s.json") ms," \
      "p99 $(jq -r '.run.http.p99' "$out/$name-$s.json") ms," \
      "$(jq -r '"\(.run.successful)/\(.run.requests)"' "$out/$name-$s.json") allowed" >&2
  done
}

# The inner step, run by bench-env.sh inside a configured control plane:
#   growth.sh __point NAME BENCH-ARGS...
if [ "$what" = __point ]; then shift; point "$@"; exit 0; fi

mkdir -p "$out/work"
for k in $COUNTS; do
  mkdir -p "$out/policies-$k"
  "$here/growth.py" policies "$k" "$out/policies-$k/policies.yaml"
done
for s in $SIZES; do "$here/growth.py" bodies "$s" "$out/bodies-$s.jsonl"; done

if [ "$what" = webhook ] || [ "$what" = both ]; then
  work="$out/work"
  # shellcheck source=e2e/lib.sh
  source "$here/lib.sh"
  trap 'stop_celer TERM' EXIT
  for k in $COUNTS; do
    start_celer "growth-$k" --policies "$out/policies-$k"
    point "webhook-$k" --target "https://127.0.0.1:$celer_port/validate" --ca "$work/tls-growth-$k/ca.crt"
    stop_celer TERM
  done
  trap - EXIT
fi

if [ "$what" = kube ] || [ "$what" = both ]; then
  export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
  export CELER_E2E_WORK="$out/work"
  export CELER_E2E_KEEP=1
  started=0
  if ! "$here/control-plane.sh" status >/dev/null 2>&1; then
    "$here/control-plane.sh" up > /dev/null
    started=1
  fi
  trap '[ "$started" = 1 ] && "$here/control-plane.sh" down' EXIT
  # shellcheck disable=SC1091
  source <("$here/control-plane.sh" env)
  for k in $COUNTS; do
    for mode in native celer; do
      OUT="$out" SIZES="$SIZES" RATE="$RATE" DURATION="$DURATION" \
        "$here/bench-env.sh" "$mode" "$out/policies-$k" -- \
        "$here/growth.sh" __point "kube-$mode-$k" --kube --kubeconfig "$KUBECONFIG" --namespace policy-bench
    done
  done
fi

python3 - "$out" "$COUNTS" "$SIZES" > "$out/summary.md" <<'PY'
import json, pathlib, sys
out, counts, sizes = pathlib.Path(sys.argv[1]), sys.argv[2].split(), sys.argv[3].split()
def fig(name, s):
    f = out / f"{name}-{s}.json"
    if not f.exists():
        return None
    r = json.loads(f.read_text()).get("run")
    return r if r and r["successful"] == r["requests"] else None
def label(s):
    s = int(s)
    return f"{s / 1048576:g} MB" if s >= 1048576 else f"{s / 1024:g} KB"
for series, title in [("webhook", "celer serve alone"), ("kube-native", "through kube-apiserver, native"),
                      ("kube-celer", "through kube-apiserver, celer")]:
    if not any(fig(f"{series}-{k}", s) for k in counts for s in sizes):
        continue
    print(f"### {title}: p50 / p99 ms (p50 as a multiple of K = 0's)\n")
    print("| non-matching policies | " + " | ".join(label(s) for s in sizes) + " |")
    print("|---:|" + "---:|" * len(sizes))
    for k in counts:
        cells = []
        for s in sizes:
            r, base = fig(f"{series}-{k}", s), fig(f"{series}-0", s)
            if not r:
                cells.append("failed")
                continue
            x = f" ({r['http']['p50'] / base['http']['p50']:.2f}x)" if base else ""
            cells.append(f"{r['http']['p50']:.3f} / {r['http']['p99']:.3f}{x}")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print()
PY
cat "$out/summary.md"
