# Shared by e2e/run.sh and e2e/bench-env.sh (sourced): calls to the API server, and celer
# started and stopped as a webhook of the e2e control plane. Expects `e2e/control-plane.sh env`
# to be evaluated and $work to be a scratch directory.

# The tally of checks: ok NAME, bad NAME WHY; each script prints its summary from pass, fail
# and failed.
pass=0 fail=0 failed=()
ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); failed+=("$1"); echo "FAIL $1: $2"; }

# api METHOD PATH [BODY]: sets $status; the body is in $work/body.json, headers in $work/headers.
api() {
  local data=()
  [ $# -ge 3 ] && data=(--data-binary "$3")
  local ctype="application/json"
  [ "$1" = PATCH ] && ctype="application/merge-patch+json"
  status="$(curl -sS -o "$work/body.json" -D "$work/headers" -w '%{http_code}' \
    --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    -H "Content-Type: $ctype" -X "$1" "$CELER_E2E_SERVER$2" "${data[@]}")" || status=000
}

# The message of the last answer (a Status's), and its warnings.
message() { jq -r '.message // empty' "$work/body.json" 2>/dev/null; }
warnings() { grep -i '^warning:' "$work/headers" || true; }
# The value of annotation $1 in the last answer's object.
annotation() { jq -r --arg k "$1" '.metadata.annotations[$k] // empty' "$work/body.json" 2>/dev/null; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

celer_pid=""
celer_port=""
celer_log=""

# start_celer NAME ARGS...: `celer serve` on a free loopback port with a self-signed CA in
# $work/tls-NAME (unless ARGS give --tls-cert), the given arguments added; waits for /readyz.
# CELER_LISTEN_HOST binds another address than 127.0.0.1 (0.0.0.0 for a Service's endpoint). Cluster mode and
# registration are up to the arguments.
start_celer() {
  local name="$1"; shift
  celer_port="$(free_port)"
  celer_log="$work/celer-$name.log"
  # A given certificate replaces the self-signed one (its CA is expected in $work/tls-NAME).
  local tls=(--tls-dir "$work/tls-$name") arg register=false
  # Read without a pipe: under pipefail, `printf | grep -q` fails at random when grep exits
  # before printf has written everything (SIGPIPE), which once dropped this check.
  for arg in "$@"; do
    [ "$arg" = --tls-cert ] && tls=()
    [ "$arg" = --register-webhooks ] && register=true
  done
  setsid "$CELER_BIN" serve --listen "${CELER_LISTEN_HOST:-127.0.0.1}:$celer_port" "${tls[@]}" \
    --log-level info "$@" > "$celer_log" 2>&1 < /dev/null &
  celer_pid=$!
  # Not a job of this shell: it is stopped by stop_celer, and a KILL is not reported.
  disown "$celer_pid"
  # Registration comes after the caches have listed: then wait for its log line too.
  local line=""
  $register && line="webhook configurations registered"
  await_ready celer "$name" "$line"
}

# await_ready WHAT NAME [LOG_LINE]: waits up to 30 s for $celer_pid to answer /readyz with the
# CA of $work/tls-NAME (and, when given, for LOG_LINE in $celer_log); fails at once if it exits.
await_ready() {
  local what="$1" name="$2" line="${3:-}" i
  for i in $(seq 1 150); do
    if ! kill -0 "$celer_pid" 2>/dev/null; then
      echo "$what exited at startup:" >&2; tail -n 20 "$celer_log" >&2
      celer_pid=""; return 1
    fi
    if [ -f "$work/tls-$name/ca.crt" ] && curl -fsS --cacert "$work/tls-$name/ca.crt" \
        "https://127.0.0.1:$celer_port/readyz" >/dev/null 2>&1; then
      if [ -z "$line" ] || grep -q "$line" "$celer_log"; then
        return 0
      fi
    fi
    sleep 0.2
  done
  echo "$what not ready after 30 s:" >&2; tail -n 20 "$celer_log" >&2
  return 1
}

# start_floor NAME: the serving floor (crates/webhook/examples/floor_server.rs: celer's TLS,
# HTTP stack and runtime with no engine; it allows every review and has no opinion on any
# SubjectAccessReview) in celer's place: the same variables, the CA in $work/tls-NAME, stopped
# by stop_celer. FLOOR_BIN [target/release/examples/floor_server, built if missing].
start_floor() {
  local name="$1" repo_dir
  repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  FLOOR_BIN="${FLOOR_BIN:-$repo_dir/target/release/examples/floor_server}"
  [ -x "$FLOOR_BIN" ] || (cd "$repo_dir" && cargo build --release --example floor_server -p celer-webhook) || return 1
  celer_port="$(free_port)"
  celer_log="$work/floor-$name.log"
  setsid "$FLOOR_BIN" "${CELER_LISTEN_HOST:-127.0.0.1}:$celer_port" "$work/tls-$name" \
    > "$celer_log" 2>&1 < /dev/null &
  celer_pid=$!
  disown "$celer_pid"
  await_ready "the floor server" "$name"
}

# stop_celer [SIGNAL]: TERM (celer drains, and unregisters when told to) or KILL (a crash).
stop_celer() {
  local signal="${1:-TERM}" i
  [ -n "$celer_pid" ] || return 0
  kill -"$signal" -- "-$celer_pid" 2>/dev/null || kill -"$signal" "$celer_pid" 2>/dev/null || true
  for i in $(seq 1 150); do
    kill -0 "$celer_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$celer_pid" 2>/dev/null; then
    kill -KILL -- "-$celer_pid" 2>/dev/null || true
  fi
  celer_pid=""
}

# Objects. pod NAME KIND [LABELS] [ANNOTATIONS], KIND: restricted (passes every Pod Security
# check), plain (baseline only: no securityContext), privileged (fails baseline).
pod() {
  jq -cn --arg name "$1" --arg kind "$2" --argjson labels "${3:-{\}}" --argjson annotations "${4:-{\}}" '
    {apiVersion: "v1", kind: "Pod",
     metadata: {name: $name, labels: $labels, annotations: $annotations},
     spec: (if $kind == "restricted" then
              {securityContext: {runAsNonRoot: true, seccompProfile: {type: "RuntimeDefault"}},
               containers: [{name: "app", image: "busybox:1.36",
                 securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}}]}
            elif $kind == "privileged" then
              {containers: [{name: "app", image: "busybox:1.36", securityContext: {privileged: true}}]}
            else {containers: [{name: "app", image: "busybox:1.36"}]} end)}'
}

# deployment NAME REPLICAS [privileged]
deployment() {
  local template
  template="$(pod x "${3:-restricted}" '{"app":"'"$1"'"}' | jq -c '{metadata: {labels: .metadata.labels}, spec}')"
  jq -cn --arg name "$1" --argjson replicas "$2" --argjson template "$template" '
    {apiVersion: "apps/v1", kind: "Deployment", metadata: {name: $name},
     spec: {replicas: $replicas, selector: {matchLabels: {app: $name}}, template: $template}}'
}

pods() { echo "/api/v1/namespaces/$1/pods${2:+/$2}"; }
deployments() { echo "/apis/apps/v1/namespaces/$1/deployments${2:+/$2}"; }
webhooks() { echo "/apis/admissionregistration.k8s.io/v1/$1webhookconfigurations/celer"; }
