#!/usr/bin/env bash
# Issue 15 item 3, the engine level on identical inputs: Kyverno's ValidatingPolicy and
# MutatingPolicy engines (its Go module at e2e/peers/engine/go.mod's pin, driven as Kyverno's
# own engine benchmarks drive them: e2e/peers/engine/engine_test.go) against celer's engine
# (crates/policy/benches/peer_inputs.rs) at 1, 16 and 64 policies, on the inputs the Go module
# writes (TestDump): the same object bytes, the same policy YAML; celer checks it decides as
# Kyverno did before it is timed. Go and celer runs alternate, ROUNDS times (default 3).
#
#   e2e/peers/engine.sh          # about 10 minutes once built (the Go build: minutes, cold)
#   ROUNDS=1 BENCHTIME=1s e2e/peers/engine.sh
#
# Results in target/e2e/peers/engine/: the inputs, go-*.txt and celer-*.txt per round, and
# summary.md (medians over the rounds; Kyverno's published figures for its 1.19.2 fix scaled
# to this machine by the ratio measured here on the pre-fix v1.19.1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${OUT:-$repo/target/e2e/peers/engine}"
rounds="${ROUNDS:-3}"
benchtime="${BENCHTIME:-3s}"
mkdir -p "$out"
rm -f "$out"/go-*.txt "$out"/celer-*.txt "$out/summary.md"

echo "engine.sh: building Kyverno's engine benchmark (its module: minutes on a cold cache)" >&2
(cd "$here/engine" && nice -n 10 go test -mod=readonly -trimpath -c -o "$out/kyverno-engine.test" .)
echo "engine.sh: writing the inputs and Kyverno's decisions" >&2
PEER_DUMP="$out" "$out/kyverno-engine.test" -test.run '^TestDump$' -test.count 1 >/dev/null
echo "engine.sh: building celer's bench" >&2
(cd "$repo" && cargo bench -p celer-policy --bench peer_inputs --no-run 2>/dev/null)

for round in $(seq 1 "$rounds"); do
  echo "engine.sh: round $round of $rounds: Kyverno" >&2
  "$out/kyverno-engine.test" -test.run '^$' -test.bench . -test.benchmem \
    -test.benchtime "$benchtime" -test.count 1 > "$out/go-$round.txt"
  echo "engine.sh: round $round of $rounds: celer" >&2
  (cd "$repo" && CELER_PEER_INPUTS="$out" cargo bench -p celer-policy --bench peer_inputs 2>/dev/null) \
    > "$out/celer-$round.txt"
done

{
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
  echo "Kyverno: $(grep -Eo "github.com/kyverno/kyverno v[^ ]+" "$here/engine/go.mod" | head -n1)"
} > "$out/machine.txt"
python3 - "$out" "$rounds" > "$out/summary.md" <<'PY'
import pathlib, re, statistics, sys
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
go, celer = {}, {}
for r in range(1, rounds + 1):
    for line in (out / f"go-{r}.txt").read_text().splitlines():
        m = re.match(r"Benchmark(Validating|Mutating)Policy/N=(\d+)-\d+\s+\d+\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op", line)
        if m:
            key = ("vpol" if m[1] == "Validating" else "mpol", int(m[2]))
            go.setdefault(key, []).append((float(m[3]) / 1000, int(m[5])))
    for line in (out / f"celer-{r}.txt").read_text().splitlines():
        m = re.match(r"peer_inputs (vpol|mpol) N=(\d+): ([\d.]+) us/op (\d+) allocs/op \(decision as Kyverno's\)", line)
        if m:
            celer.setdefault((m[1], int(m[2])), []).append((float(m[3]), int(m[4])))
# Kyverno's published engine benchmark figures (ms, allocations), before and after 1.19.2.
blog = {("vpol", 1): (0.31, 2327, 0.10, 854), ("vpol", 16): (4.91, 37055, 0.16, 2718),
        ("vpol", 64): (20.01, 148131, 0.36, 8672), ("mpol", 64): (10.59, None, 2.97, None)}
print("| engine | N | Kyverno v1.19.1 us/op | Kyverno allocs/op | published before: us, allocs | "
      "published after, scaled here: us | celer us/op | celer allocs/op | Kyverno / celer (time) | "
      "scaled after / celer | Kyverno allocs / celer allocs |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in sorted(go, key=lambda k: (k[0] != "vpol", k[1])):
    g, c = go[key], celer.get(key)
    gus = statistics.median(x[0] for x in g)
    gal = statistics.median(x[1] for x in g)
    if not c:
        print(f"| {key[0]} | {key[1]} | {gus:.1f} | {gal:.0f} | | | no celer figure | | | | |")
        continue
    cus = statistics.median(x[0] for x in c)
    cal = statistics.median(x[1] for x in c)
    b = blog.get(key)
    before = after = "-"
    scaled_ratio = "-"
    if b:
        before = f"{b[0] * 1000:.0f}, {b[1] if b[1] else '-'}"
        scaled = b[2] * 1000 * gus / (b[0] * 1000)
        after = f"{scaled:.1f}"
        scaled_ratio = f"{scaled / cus:.1f}x"
    print(f"| {key[0]} | {key[1]} | {gus:.1f} | {gal:.0f} | {before} | {after} | {cus:.1f} | {cal:.0f} | "
          f"{gus / cus:.1f}x | {scaled_ratio} | {gal / max(cal, 1):.0f}x |")
print()
print(f"Medians over {rounds} alternating rounds of each side. celer's figure is review bytes to "
      "response bytes (parse, match, evaluate, patch, write); Kyverno's is its engine's Handle "
      "as its benchmarks call it (ValidatingPolicy: the object already decoded; MutatingPolicy: "
      "the object's bytes).")
PY
cat "$out/machine.txt" >> "$out/summary.md"
cat "$out/summary.md"
