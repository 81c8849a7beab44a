#!/usr/bin/env bash
# CPU per request of `celer serve` alone (no API server): the contract's policies
# (policies/bench-contract), the generator's small contract-compliant Pods, RATE requests a
# second for DURATION on /validate and on /mutate, celer's CPU sampled by `celer bench --pid`.
# Each configuration is a celer binary and extra serve flags, separated by `::`, run in turn
# ROUNDS times (default 3) so that two builds or two flag sets are compared in one session:
#
#   e2e/serve-cpu.sh target/release/celer                                  # one configuration
#   e2e/serve-cpu.sh /tmp/celer-old :: target/release/celer :: target/release/celer --io-threads 2
#   e2e/serve-cpu.sh floor :: target/release/celer         # beside the serving floor
#
# `floor` is crates/webhook/examples/floor_server.rs: celer's TLS, HTTP stack and runtime with
# no engine (every review allowed at once), the reference for what any webhook built this way
# costs per request here; the bench itself is then run by target/release/celer.
#
# BENCH_FLAGS adds flags to each `celer bench` (`BENCH_FLAGS=--http2` for one HTTP/2 connection,
# as kube-apiserver calls webhooks).
#
# Prints one line per run: configuration, endpoint, achieved rps, p50 ms, celer cores, and
# microseconds of celer CPU per request. Results in target/e2e/serve-cpu/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
RATE="${RATE:-400}" DURATION="${DURATION:-15s}" ROUNDS="${ROUNDS:-3}"
work="$repo/target/e2e/serve-cpu"
mkdir -p "$work"
configs=() current=""
for arg in "$@"; do
  if [ "$arg" = "::" ]; then configs+=("$current"); current=""; else current+="${current:+ }$arg"; fi
done
[ -n "$current" ] && configs+=("$current")
[ ${#configs[@]} -gt 0 ] || configs=("$repo/target/release/celer")
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
trap 'stop_celer TERM' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!configs[@]}"; do
    read -r -a config <<< "${configs[$i]}"
    if [ "${config[0]}" = floor ]; then
      export CELER_BIN="$repo/target/release/celer"
      start_floor "cpu-$i"
    else
      export CELER_BIN="${config[0]}"
      start_celer "cpu-$i" --policies "$repo/policies/bench-contract" "${config[@]:1}"
    fi
    for endpoint in validate mutate; do
      out="$work/r$round-c$i-$endpoint.json"
      "$CELER_BIN" bench --target "https://127.0.0.1:$celer_port/$endpoint" \
        --ca "$work/tls-cpu-$i/ca.crt" --rate "$RATE" --duration "$DURATION" \
        --warmup-rate "$RATE" --warmup-duration 2s --expect allowed --pid "$celer_pid" \
        --quiet ${BENCH_FLAGS:-} --output json > "$out"
      jq -r --arg c "${configs[$i]}" --arg e "$endpoint" --argjson rate "$RATE" \
        '"\($c) /\($e): \(.run.achieved_rps | floor) rps, p50 \(.run.http.p50) ms, \(.run.resources.cpu_cores.mean) cores, \((.run.resources.cpu_cores.mean / .run.achieved_rps * 1e6) | floor) us/request, \(.run.successful)/\(.run.requests) allowed"' "$out"
    done
    stop_celer TERM
  done
done
