#!/usr/bin/env bash
# Builds celer laid out by what it runs: profile-guided optimisation (an instrumented build
# serves a training load, and the release build is then compiled by that profile: hot code
# together, cold code apart, branches ordered by what they did), then BOLT on the result (the
# optimised binary instrumented again, the same load served, and its functions and basic
# blocks reordered by that second profile, cold parts of hot functions split off). A webhook
# call at a few hundred a second runs through some 300 KiB of code that other processes have
# pushed out of the caches since the last call; that, more than the instructions themselves,
# is what a call costs here (docs/benchmarks.md, issue 15's "Seventh session" and "Eighth
# session").
#
#   scripts/pgo.sh             # about 35 minutes on 2 cores (two release builds, two loads); prints the binary's path
#   BOLT=0 scripts/pgo.sh      # profile-guided only (about 25 minutes)
#
# The training load is NOT the contract the benchmarks measure (policies/bench-contract): it
# is the embedded Pod Security set and examples/admission (a ValidatingAdmissionPolicy and a
# MutatingAdmissionPolicy with ApplyConfiguration) under `celer serve`, small and large,
# compliant and non-compliant generated Pods on /validate and /mutate over HTTP/1.1 and HTTP/2,
# and the SubjectAccessReview mix of examples/authz on /authorize. What it measures on the
# contract is then what a user's own policies would see. The load comes from the instrumented
# binary's own `celer bench`, so the client's half of the HTTP and TLS code is profiled with
# the server's: it is the same code, hot on both sides.
#
# Needs llvm-profdata, and for BOLT llvm-bolt and merge-fdata, of rustc's LLVM major version
# (installed with apt-get as llvm-<major> and bolt-<major> when missing). Outputs, under
# target/ (which git ignores): target/pgo/gen (the instrumented build), target/pgo/profiles
# (raw and merged profiles), target/pgo/use/release/celer (the profile-guided binary, linked
# with its relocations kept for BOLT), target/pgo/bolt/celer (the final binary, printed last).
# Not part of CI.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
work="$repo/target/pgo"
profiles="$work/profiles"
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
llvm_bin="/usr/lib/llvm-$major/bin"

# need TOOL PACKAGE: $llvm_bin/TOOL, installing PACKAGE with apt-get when it is missing.
need() {
  [ -x "$llvm_bin/$1" ] && return 0
  command -v apt-get >/dev/null 2>&1 || {
    echo "error: $1 for LLVM $major (rustc's LLVM) is needed; install $2" >&2
    exit 1
  }
  echo "installing $2 with apt-get (for $1)"
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get install -y -qq "$2" >/dev/null
  [ -x "$llvm_bin/$1" ] || { echo "error: $2 did not provide $llvm_bin/$1" >&2; exit 1; }
}
need llvm-profdata "llvm-$major"
if [ "${BOLT:-1}" != 0 ]; then
  need llvm-bolt "bolt-$major"
  need merge-fdata "bolt-$major"
fi

# shellcheck source=e2e/lib.sh
source "$repo/e2e/lib.sh"
trap 'stop_celer TERM' EXIT

# train SERVE_FLAGS...: $CELER_BIN serving on a free port ($celer_port), CA in $work/tls-pgo.
train() { start_celer pgo "$@"; }
# load ENDPOINT BENCH_FLAGS...: $CELER_BIN's own `celer bench` against it.
load() {
  "$CELER_BIN" bench --target "https://127.0.0.1:$celer_port/$1" --ca "$work/tls-pgo/ca.crt" \
    --quiet --rate "${RATE:-300}" --duration "${SECONDS_EACH:-8}s" "${@:2}" > /dev/null
}
# training BINARY: the training load, served and sent by BINARY (an instrumented build; each
# of its processes writes its profile when it exits, the server on SIGTERM once drained).
training() {
  export CELER_BIN="$1"
  train --policies examples/admission/policy.yaml
  for endpoint in validate mutate; do
    for flags in "" "--pod-size large" "--noncompliant" "--http2" "--http2 --pod-size large"; do
      # shellcheck disable=SC2086
      load "$endpoint" $flags
    done
  done
  stop_celer TERM
  train # the embedded Pod Security Standards
  for flags in "" "--noncompliant" "--http2 --pod-size large"; do
    # shellcheck disable=SC2086
    load validate $flags
  done
  stop_celer TERM
  train --policies examples/authz/policies.yaml --policies examples/authz/rego-policies.yaml
  load authorize --authz-mix
  load authorize --authz-mix --http2
  stop_celer TERM
}
# logged LOG COMMAND...: COMMAND with its output in LOG, shown when it fails.
logged() {
  local log="$1"; shift
  "$@" > "$log" 2>&1 || { tail -n 20 "$log" >&2; echo "error: $1 failed (log: $log)" >&2; exit 1; }
}

rm -rf "$profiles" && mkdir -p "$profiles/raw"
echo "1/4 the instrumented build (target/pgo/gen)"
RUSTFLAGS="-Cprofile-generate=$profiles/raw" \
  cargo build --release -p celer --target-dir "$work/gen" --quiet

echo "2/4 the training load"
training "$work/gen/release/celer"
echo "    merging $(find "$profiles/raw" -name '*.profraw' | wc -l) profiles"
"$llvm_bin/llvm-profdata" merge -o "$profiles/merged.profdata" "$profiles/raw"

echo "3/4 the profile-guided build (target/pgo/use)"
# --emit-relocs keeps the link's relocations in the binary: BOLT needs them to move functions;
# the code is the same.
RUSTFLAGS="-Cprofile-use=$profiles/merged.profdata -Clink-args=-Wl,--emit-relocs" \
  cargo build --release -p celer --target-dir "$work/use" --quiet
optimised="$work/use/release/celer"
if [ "${BOLT:-1}" = 0 ]; then
  echo "$optimised"
  exit 0
fi

echo "4/4 BOLT (target/pgo/bolt)"
bolt="$work/bolt"
rm -rf "$bolt" && mkdir -p "$bolt/fdata"
# One profile per process, written when it exits.
logged "$bolt/instrument.log" "$llvm_bin/llvm-bolt" "$optimised" -instrument \
  -o "$bolt/celer-instrumented" --instrumentation-file="$bolt/fdata/profile" \
  --instrumentation-file-append-pid
training "$bolt/celer-instrumented"
echo "    merging $(find "$bolt/fdata" -name 'profile.*' | wc -l) profiles"
"$llvm_bin/merge-fdata" "$bolt"/fdata/profile.* > "$bolt/merged.fdata" 2> "$bolt/merge.log" ||
  { tail -n 20 "$bolt/merge.log" >&2; exit 1; }
# Blocks in the order the profile ran them (ext-tsp), functions clustered by their calls
# (cdsort), each hot function's cold blocks moved apart, identical functions folded. -hugify:
# at start the hot code (about 2 MiB) is asked onto transparent huge pages, fewer TLB entries
# for what a call runs through; how much the kernel maps huge depends on its THP settings (on
# the machine of docs/benchmarks.md, one of the two 2 MiB pages), and with THP "never" the
# code stays on small pages and nothing else changes.
logged "$bolt/optimise.log" "$llvm_bin/llvm-bolt" "$optimised" -o "$bolt/celer" \
  -data "$bolt/merged.fdata" -reorder-blocks=ext-tsp -reorder-functions=cdsort \
  -split-functions -split-all-cold -split-eh -icf=1 -use-gnu-stack -hugify
echo "$bolt/celer"
