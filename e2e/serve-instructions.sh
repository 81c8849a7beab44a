#!/usr/bin/env bash
# Instructions per webhook call, counted by callgrind (stable on a shared, noisy machine where
# CPU time is not): the serving floor (crates/webhook/examples/floor_server.rs) and each given
# celer binary serving policies/bench-contract, on a Pod review shaped as kube-apiserver sends
# it. The Pod is created on the e2e control plane (dry run, with a field manager) and the object
# the API server answers, defaults and managed fields included, is what `celer bench --requests`
# wraps into each review (its metadata.uid and creationTimestamp left out: a mutating webhook
# does not see them, and the floor copies the first "uid" it finds).
#
#   e2e/serve-instructions.sh [CELER_BIN...]     # default target/release/celer
#   e2e/serve-instructions.sh /tmp/celer-old target/release/celer   # two builds
#
# COUNT requests (500) after WARMUP (100), over one HTTP/2 connection as kube-apiserver calls,
# to /validate and to /mutate; only the COUNT requests are counted (callgrind_control zeroes the
# counters after the warm-up and dumps them after the run). Needs valgrind. Prints one line per
# server and endpoint: instructions per request, and for celer whether the counted requests
# were evaluated on the I/O thread (as natively) or handed to the blocking pool (celer moves
# evaluations there while they overrun 5 ms, which under callgrind the first ones do; see
# crates/webhook/src/inline.rs). Results in target/e2e/serve-instructions/.
#
# FOOTPRINT=1 also counts the code each request runs through: the distinct 64-byte lines (and
# 4 KiB pages) of machine code executed while requests flow on one warm connection (the middle FOOTPRINT_S
# seconds, 20 by default, of one run at 50 a second; no TLS handshake in the window). On a
# machine where requests arrive a few milliseconds apart that code is fetched again from
# outer caches each time: it is the part of the cost per request that instruction counts
# do not show.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
COUNT="${COUNT:-500}" WARMUP="${WARMUP:-100}"
work="$repo/target/e2e/serve-instructions"
rm -rf "$work" && mkdir -p "$work"
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$repo/target/release/celer")
floor="$repo/target/release/examples/floor_server"
[ -x "$floor" ] || (cd "$repo" && cargo build --release --example floor_server -p celer-webhook)
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

export CELER_E2E_DIR="$work/control-plane"
export CELER_E2E_APISERVER_PORT="${CELER_E2E_APISERVER_PORT:-$(free_port)}"
export CELER_E2E_ETCD_PORT="${CELER_E2E_ETCD_PORT:-$(free_port)}"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
eval "$("$here/control-plane.sh" up)"

api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"policy-bench"}}'
pod="$(jq -cn '{apiVersion: "v1", kind: "Pod",
  metadata: {name: "bench-0", labels: {"policy-bench-subject": "true", app: "bench"},
             annotations: {"policy-bench-team": "platform"}},
  spec: {containers: [{name: "app-0", image: "registry.example/bench/app:1.0.0",
    ports: [{containerPort: 8080, protocol: "TCP"}],
    env: [range(2) as $i | {name: "BENCH_SETTING_\($i)", value: ("value-0-\($i)-" + ("x" * 80))}],
    resources: {requests: {cpu: "100m", memory: "64Mi"}, limits: {memory: "128Mi"}},
    volumeMounts: [{name: "data", mountPath: "/data"}],
    securityContext: {privileged: false, allowPrivilegeEscalation: false, runAsNonRoot: true,
      capabilities: {drop: ["ALL"]}, seccompProfile: {type: "RuntimeDefault"}}}],
    volumes: [{name: "data", emptyDir: {}}],
    securityContext: {runAsNonRoot: true, seccompProfile: {type: "RuntimeDefault"}}}}')"
api POST "/api/v1/namespaces/policy-bench/pods?dryRun=All&fieldManager=celer-bench" "$pod"
[ "$status" = 201 ] || { echo "creating the Pod answered $status: $(message)" >&2; exit 1; }
jq -c 'del(.metadata.uid, .metadata.creationTimestamp)' "$work/body.json" > "$work/requests.jsonl"
echo "the Pod as kube-apiserver returns it: $(wc -c < "$work/requests.jsonl") bytes" \
  "($(jq -c '.metadata.managedFields' "$work/requests.jsonl" | wc -c) of managed fields)"
"$here/control-plane.sh" down >/dev/null

# count NAME ENDPOINT CLIENT COMMAND...: callgrind on COMMAND (a server on $port), COUNT
# requests to ENDPOINT counted.
count() {
  local name="$1" endpoint="$2" client="$3"; shift 3
  local out="$work/callgrind-$name-$endpoint" i
  valgrind --tool=callgrind --callgrind-out-file="$out.%p" "$@" > "$work/$name-$endpoint.log" 2>&1 &
  server_pid=$!
  for i in $(seq 1 300); do
    curl -fsS --cacert "$work/tls-$name/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.2
  done
  send() {
    "$client" bench --target "https://127.0.0.1:$port/$endpoint" --ca "$work/tls-$name/ca.crt" \
      --http2 --requests "$work/requests.jsonl" --rate 200 --count "$1" --expect allowed \
      --quiet --output json > "$work/bench-$name-$endpoint-$1.json"
  }
  send "$WARMUP"
  callgrind_control -z "$server_pid" >/dev/null 2>&1
  send "$COUNT"
  callgrind_control -d "$server_pid" >/dev/null 2>&1
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  local ok total
  ok="$(jq .run.successful "$work/bench-$name-$endpoint-$COUNT.json")"
  [ "$ok" = "$COUNT" ] || { echo "$name /$endpoint: only $ok of $COUNT allowed" >&2; exit 1; }
  total="$(callgrind_annotate "$(ls "$out".*.1)" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')"
  echo "$name /$endpoint: $((total / COUNT)) instructions per request$(where "$work/$name-$endpoint.log")" |
    tee -a "$work/summary.txt"
}

# Where a celer log's evaluations ran last: the gate's last move, if any.
where() {
  case "$(grep -Eo 'go to the blocking pool|back on the I/O threads' "$1" | tail -1)" in
    "go to the blocking pool") echo " (evaluated on the blocking pool)" ;;
    "back on the I/O threads") echo " (back on the I/O thread after the warm-up's overruns)" ;;
    *) echo "" ;;
  esac
}

# footprint NAME ENDPOINT COMMAND...: distinct lines of code executed per request (see above).
footprint() {
  local name="$1" endpoint="$2"; shift 2
  local out="$work/footprint-$name-$endpoint" window="${FOOTPRINT_S:-20}" i
  valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
    --callgrind-out-file="$out.%p" "$@" > "$work/footprint-$name-$endpoint.log" 2>&1 &
  server_pid=$!
  for i in $(seq 1 300); do
    curl -fsS --cacert "$work/tls-$name/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.2
  done
  "$client" bench --target "https://127.0.0.1:$port/$endpoint" --ca "$work/tls-$name/ca.crt" \
    --http2 --requests "$work/requests.jsonl" --rate 50 --count $((50 * (window + 20))) \
    --expect allowed --quiet --output json > "$work/footprint-$name-$endpoint.json" &
  local bench=$!
  sleep 10; callgrind_control -z "$server_pid" >/dev/null 2>&1
  sleep "$window"; callgrind_control -d "$server_pid" >/dev/null 2>&1
  wait "$bench"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  # Each cost line of an instruction is "0x<address> <count>"; a call's line repeats the call
  # site's address. Lines of 64 bytes, counted once; the instructions executed, over the
  # window's requests (at 50 a second), give the per-request scale.
  awk -v n=$((50 * window)) -v name="$name" -v ep="$endpoint" -v at="$(where "$work/footprint-$name-$endpoint.log")" '
    function hex(s,  i, c, v) { v = 0; s = tolower(substr(s, 3));
      for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
      return v }
    /^calls=/ { call = 1; next }
    /^0x/ { a = hex($1); line[int(a / 64)] = 1; page[int(a / 4096)] = 1; if (!call) ir += $NF; call = 0 }
    END { for (l in line) lines++; for (p in page) pages++;
      printf "%s /%s: %d lines of code (%d KiB) on %d pages per request, %d instructions per request%s\n",
        name, ep, lines, lines * 64 / 1024, pages, ir / n, at }' "$(ls "$out".*.1)" | tee -a "$work/summary.txt"
}

# The load comes from this build's `celer bench` whichever servers are compared.
client="${CLIENT:-$repo/target/release/celer}"
for endpoint in validate mutate; do
  port="$(free_port)"
  count floor "$endpoint" "$client" "$floor" "127.0.0.1:$port" "$work/tls-floor"
  for i in "${!bins[@]}"; do
    port="$(free_port)"
    count "celer$i" "$endpoint" "$client" "${bins[$i]}" serve --listen "127.0.0.1:$port" \
      --tls-dir "$work/tls-celer$i" --policies "$repo/policies/bench-contract" --log-level info
  done
done
[ "${FOOTPRINT:-0}" = 1 ] || exit 0
for endpoint in validate mutate; do
  port="$(free_port)"
  footprint floor "$endpoint" "$floor" "127.0.0.1:$port" "$work/tls-floor"
  for i in "${!bins[@]}"; do
    port="$(free_port)"
    footprint "celer$i" "$endpoint" "${bins[$i]}" serve --listen "127.0.0.1:$port" \
      --tls-dir "$work/tls-celer$i" --policies "$repo/policies/bench-contract" --log-level info
  done
done
