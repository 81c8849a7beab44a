#!/usr/bin/env bash
# Builds celer with profile-guided optimisation: an instrumented build serves a training load,
# and the release build is then laid out by what that load ran (hot code together, cold code
# apart, branches ordered by what they did). A webhook call at a few hundred a second runs
# through some 300 KiB of code that other processes have pushed out of the caches since the
# last call; that, more than the instructions themselves, is what a call costs here
# (docs/benchmarks.md, issue 15's "Seventh session").
#
#   scripts/pgo.sh             # about 25 minutes on 2 cores (two release builds); prints the binary's path
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
# Needs llvm-profdata of rustc's LLVM major version (installed with apt-get as llvm-<major>
# when missing). Outputs, under target/ (which git ignores): target/pgo/gen (the instrumented
# build), target/pgo/profiles (raw and merged profiles), target/pgo/use/release/celer (the
# optimised binary). Not part of CI.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
work="$repo/target/pgo"
profiles="$work/profiles"
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
profdata="llvm-profdata-$major"
if ! command -v "$profdata" >/dev/null 2>&1; then
  profdata="/usr/lib/llvm-$major/bin/llvm-profdata"
fi
if [ ! -x "$profdata" ] && ! command -v "$profdata" >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || {
    echo "error: llvm-profdata for LLVM $major is needed (rustc's LLVM); install llvm-$major" >&2
    exit 1
  }
  echo "installing llvm-$major with apt-get (for llvm-profdata)"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get install -y -qq "llvm-$major" >/dev/null
  profdata="/usr/lib/llvm-$major/bin/llvm-profdata"
fi

rm -rf "$profiles" && mkdir -p "$profiles/raw"
echo "1/4 the instrumented build (target/pgo/gen)"
RUSTFLAGS="-Cprofile-generate=$profiles/raw" \
  cargo build --release -p celer --target-dir "$work/gen" --quiet
gen="$work/gen/release/celer"

echo "2/4 the training load"
# The instrumented server is started and stopped by e2e/lib.sh (stopped with SIGTERM: it
# drains and exits, which is when it writes its profile).
# shellcheck source=e2e/lib.sh
source "$repo/e2e/lib.sh"
export CELER_BIN="$gen"
trap 'stop_celer TERM' EXIT
# train SERVE_FLAGS...: the instrumented server on a free port ($celer_port), CA in $work/tls-pgo.
train() { start_celer pgo "$@"; }
load() {
  "$gen" bench --target "https://127.0.0.1:$celer_port/$1" --ca "$work/tls-pgo/ca.crt" --quiet \
    --rate "${RATE:-300}" --duration "${SECONDS_EACH:-8}s" "${@:2}" > /dev/null
}

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

echo "3/4 merging $(find "$profiles/raw" -name '*.profraw' | wc -l) profiles"
"$profdata" merge -o "$profiles/merged.profdata" "$profiles/raw"

echo "4/4 the optimised build (target/pgo/use)"
RUSTFLAGS="-Cprofile-use=$profiles/merged.profdata" \
  cargo build --release -p celer --target-dir "$work/use" --quiet
echo "$work/use/release/celer"
