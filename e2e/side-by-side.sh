#!/usr/bin/env bash
# The side-by-side of issue 9, item 4: on the e2e control plane (e2e/control-plane.sh), the
# standard method of issue 7 through the API server with `celer bench --kube`, for each policy
# set as native policies in kube-apiserver and as the same files served by celer as a
# registered webhook (e2e/bench-env.sh), next to a run with no policies at all:
#
#   none          no admission policies (run first, and again last as none-end)
#   contract      policies/bench-contract (MutatingAdmissionPolicy + ValidatingAdmissionPolicy)
#   pod-security  policies/pod-security (the 19 Pod Security checks as VAPs)
#   gen-64        64 generated contract-like VAPs (e2e/policies-gen.py), all matching the Pods
#   gen-256       256 of them
#
# Every run: the load average noted; for the contract, its 180 API-mode correctness cases
# (`celer bench cases contract-api`); for every policy set, 5 noncompliant Pods that must be
# denied (the policies are really in force); a 15 s warm-up at 50 rps; 12,000 dry-run Pod
# CREATEs (small, compliant, --expect allowed) at 200 rps with at most 128 in flight.
# kube-apiserver's CPU and RSS come from `celer bench --pid`; celer's are sampled from /proc
# the same way (once a second, measured phase only) by a small wrapper below.
#
#   e2e/side-by-side.sh               # everything (natively, gen-256 at 12,000 requests alone
#                                     # takes about 7 minutes: kube-apiserver manages ~30 rps)
#   GEN_256_COUNT=3000 e2e/side-by-side.sh   # as in docs/benchmarks.md: about 17 minutes
#   QUICK=1 e2e/side-by-side.sh       # 2 s warm-up, 600 requests per run
#   GEN_COUNT=3000 e2e/side-by-side.sh   # fewer requests for gen-64 / gen-256 only
#   GEN_256_COUNT=3000 e2e/side-by-side.sh   # fewer for gen-256 only (GEN_64_COUNT likewise)
#   SETS="contract pod-security" e2e/side-by-side.sh   # some sets only
#
# CELER_BIN: the celer used to bench and to serve [target/release/celer, built if missing].
# Results: target/e2e/side-by-side/*.json (celer bench --output json), *.celer.json (celer's
# CPU and RSS), loadavg.txt, summary.md (the tables). The control plane is started here and
# stopped at the end (unless it was already running); celer is stopped by bench-env.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
OUT="${OUT:-$repo/target/e2e/side-by-side}"
export CELER_E2E_WORK="$OUT/work"

# The inner step, run by bench-env.sh inside a configured control plane:
#   side-by-side.sh __run NAME CASES(yes|no) COUNT
if [ "${1:-}" = __run ]; then
  name="$2" cases="$3" count="$4"
  bench=("$CELER_BIN" bench --kube --kubeconfig "$KUBECONFIG" --namespace policy-bench)
  if [ "$name" != none ] && [ "$name" != none-end ] && [ "${POLICIES:-yes}" != no ]; then
    # The policies are in force: noncompliant Pods are denied. (celer bench exits 0 whatever
    # the decisions were; they are read from its report.)
    "${bench[@]}" --noncompliant --rate 5 --count 5 --expect denied --quiet \
      --output json > "$OUT/$name.denied.json" \
      && jq -e '.run.successful == 5 and .run.errors.mismatch == 0' "$OUT/$name.denied.json" >/dev/null || {
        echo "side-by-side: $name: the noncompliant Pods were not all denied" >&2; exit 1; }
  fi
  case_args=()
  [ "$cases" = yes ] && case_args=(--cases "${CASES_FILE:-$OUT/contract-api-cases.jsonl}")
  # A configuration that fails its cases is reported, not measured (issue 15).
  [ "$cases" = yes ] && [ -n "${FAIL_ON_MISMATCH:-}" ] && case_args+=(--fail-on-mismatch)
  echo "$name: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  python3 - "$OUT/$name" "${CELER_E2E_CELER_PID:-}" -- "${bench[@]}" "${case_args[@]}" \
    --warmup-rate 50 --warmup-duration "$WARMUP" --rate 200 --count "$count" \
    --max-concurrency 128 --expect allowed --pid "$CELER_E2E_APISERVER_PID" --output json <<'PY'
# Runs the bench (stdout to OUT.json), passes its progress on, and from its "run:" line (the
# measured phase) until it exits samples PID's CPU and RSS once a second into OUT.celer.json,
# as celer bench --pid does: per-second CPU cores and RSS MiB, mean and p95 (nearest rank).
import json, math, subprocess, sys, threading, time
out, pid, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
def reading():
    try:
        stat = open(f"/proc/{pid}/stat").read()
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return None
    f = stat[stat.rfind(")") + 1:].split()
    cpu = (int(f[11]) + int(f[12])) / 100.0
    rss = next(int(l.split()[1]) * 1024 for l in status.splitlines() if l.startswith("VmRSS:"))
    return time.monotonic(), cpu, rss
samples, stop = [], threading.Event()
def sample():
    last = reading()
    while last and not stop.wait(1.0):
        now = reading()
        if not now:
            break
        samples.append(((now[1] - last[1]) / (now[0] - last[0]), now[2]))
        last = now
sampler = threading.Thread(target=sample)
with open(out + ".json", "w") as stdout:
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        sys.stderr.write(line)
        if pid and line.startswith("run:") and not sampler.is_alive():
            sampler.start()
    rc = proc.wait()
stop.set()
if sampler.is_alive():
    sampler.join()
def mean_p95(xs):
    if not xs:
        return {"mean": 0.0, "p95": 0.0}
    s = sorted(xs)
    return {"mean": sum(xs) / len(xs), "p95": s[max(0, math.ceil(0.95 * len(s)) - 1)]}
if pid:
    json.dump({"pid": int(pid), "samples": len(samples),
               "cpu_cores": mean_p95([s[0] for s in samples]),
               "rss_mib": mean_p95([s[1] / 1048576 for s in samples])},
              open(out + ".celer.json", "w"))
sys.exit(rc)
PY
  echo "$name: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  exit 0
fi

if [ -n "${QUICK:-}" ]; then
  WARMUP=2s; COUNT=${COUNT:-600}
else
  WARMUP=15s; COUNT=${COUNT:-12000}
fi
GEN_COUNT="${GEN_COUNT:-$COUNT}"
SETS="${SETS:-contract pod-security gen-64 gen-256}"
export WARMUP OUT
export CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
if [ ! -x "$CELER_BIN" ]; then (cd "$repo" && cargo build --release -p celer); fi

mkdir -p "$OUT" "$CELER_E2E_WORK"
rm -f "$OUT"/*.json "$OUT/loadavg.txt" "$OUT/summary.md"
"$CELER_BIN" bench cases contract-api > "$OUT/contract-api-cases.jsonl"
for n in 64 256; do
  mkdir -p "$OUT/gen-$n"
  "$here/policies-gen.py" "$n" "$OUT/gen-$n/policies.yaml"
done

# One control plane for every run (bench-env.sh leaves it running when it did not start it).
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
started=0
if ! "$here/control-plane.sh" status >/dev/null 2>&1; then
  "$here/control-plane.sh" up > "$CELER_E2E_WORK/env.sh"
  started=1
fi
cleanup() { if [ "$started" = 1 ]; then "$here/control-plane.sh" down; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC1091
source <("$here/control-plane.sh" env)
for ns in policy-bench policy-bench-staging; do
  curl -sS -o /dev/null --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    -H "Content-Type: application/json" -X POST "$CELER_E2E_SERVER/api/v1/namespaces" \
    --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
echo "kube-apiserver $(curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
  "$CELER_E2E_SERVER/version" | jq -r .gitVersion); $(nproc) cores; celer $("$CELER_BIN" --version)" \
  > "$OUT/machine.txt"

# run NAME MODE CASES COUNT [PATH...]
run() {
  local name="$1" mode="$2" cases="$3" count="$4"; shift 4
  echo "== side-by-side: $name ($mode $*), $count requests" >&2
  "$here/bench-env.sh" "$mode" "$@" -- "$here/side-by-side.sh" __run "$name" "$cases" "$count"
}

run none none no "$COUNT"
for set in $SETS; do
  case "$set" in
    contract) paths=("$repo/policies/bench-contract"); cases=yes; count="$COUNT" ;;
    pod-security) paths=("$repo/policies/pod-security"); cases=no; count="$COUNT" ;;
    gen-*) paths=("$OUT/$set"); cases=no; n="${set#gen-}"; v="GEN_${n}_COUNT"
      count="${!v:-$GEN_COUNT}" ;;
    *) echo "side-by-side: unknown set $set" >&2; exit 2 ;;
  esac
  run "$set-native" native "$cases" "$count" "${paths[@]}"
  run "$set-celer" celer "$cases" "$count" "${paths[@]}"
done
run none-end none no "$COUNT"

python3 - "$OUT" "$SETS" > "$OUT/summary.md" <<'PY'
import json, pathlib, sys
out, sets = pathlib.Path(sys.argv[1]), sys.argv[2].split()
def load(name):
    f = out / f"{name}.json"
    if not f.exists():
        return None
    d = json.loads(f.read_text())
    c = out / f"{name}.celer.json"
    d["celer"] = json.loads(c.read_text()) if c.exists() else None
    return d
def res(r):
    if not r:
        return "-", "-"
    return (f"{r['cpu_cores']['mean']:.3f} / {r['cpu_cores']['p95']:.3f}",
            f"{r['rss_mib']['mean']:.0f} / {r['rss_mib']['p95']:.0f}")
none = load("none")
base = none["run"]["http"]["p95"] if none else None
for s in ["none"] + sets:
    rows = [("none", none), ("none-end", load("none-end"))] if s == "none" else \
           [("none", none), ("native", load(f"{s}-native")), ("celer", load(f"{s}-celer"))]
    print(f"### {s}\n")
    print("| run | correctness | successful | p50 ms | p95 ms | p99 ms | scheduled p95 ms | queue p95 ms "
          "| achieved RPS | p95 added over none ms | kube-apiserver CPU cores (mean / p95) "
          "| kube-apiserver RSS MiB (mean / p95) | celer CPU cores (mean / p95) | celer RSS MiB (mean / p95) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, d in rows:
        if not d:
            continue
        r, c = d["run"], d["correctness"]
        corr = f"{c['passed']}/{c['cases']}" if c else "-"
        acpu, arss = res(r.get("resources"))
        ccpu, crss = res(d["celer"])
        added = f"{r['http']['p95'] - base:+.3f}" if base is not None else "-"
        print(f"| {label} | {corr} | {r['successful']} / {r['requests']} | {r['http']['p50']:.3f} | "
              f"{r['http']['p95']:.3f} | {r['http']['p99']:.3f} | {r['scheduled']['p95']:.3f} | "
              f"{r['queue']['p95']:.3f} | {r['achieved_rps']:.1f} | {added} | {acpu} | {arss} | {ccpu} | {crss} |")
    print()
PY
{
  echo "$(cat "$OUT/machine.txt")"
  echo
  echo "load average (1, 5, 15 min) before and after each run:"
  sed 's/^/    /' "$OUT/loadavg.txt"
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
