#!/usr/bin/env bash
# A Kubernetes control plane for tests: etcd and kube-apiserver on loopback, nothing else (no
# kubelet, scheduler or controller-manager: Pods stay Pending, Deployments get no ReplicaSets;
# admission is all the tests need); kube-controller-manager too when asked (below).
#
#   e2e/control-plane.sh up      build the binaries if needed (e2e/build.sh), generate a CA and
#                                certificates, start etcd and kube-apiserver, wait for /readyz,
#                                write the kubeconfigs; prints the environment (as `env`)
#   e2e/control-plane.sh down    stop both (their whole process groups); nothing is left running
#   e2e/control-plane.sh env     export lines for the running control plane
#   e2e/control-plane.sh status  whether each process runs
#
# Settings (environment):
#   CELER_E2E_DIR              state: certificates, tokens, etcd data, logs, kubeconfigs
#                              [<repo>/target/e2e/control-plane]
#   CELER_E2E_APISERVER_PORT   kube-apiserver's HTTPS port on 127.0.0.1 [16443]
#   CELER_E2E_ETCD_PORT        etcd's client port on 127.0.0.1 (the peer port is the next one) [12379]
#   CELER_E2E_BIN              a directory with kube-apiserver and etcd (skips the build)
#   CELER_E2E_READY_TIMEOUT    seconds to wait for /readyz [120]
#   CELER_E2E_AUTHORIZATION_CONFIG  an AuthorizationConfiguration file: kube-apiserver runs with
#                              --authorization-config instead of --authorization-mode RBAC
#   CELER_E2E_EXTRA_TOKENS     a file of more static-token lines (token,user,uid,"groups")
#   CELER_E2E_ADMIN_USER       the admin user's name [celer-e2e-admin] (Kyverno's chainsaw tests
#                              expect kubeadm's kubernetes-admin)
#   CELER_E2E_CONTROLLER_MANAGER=1  also run kube-controller-manager (e2e/chainsaw.sh): Namespaces
#                              are deleted, ClusterRoles aggregated, CertificateSigningRequests
#                              signed by the cluster CA, Deployments get ReplicaSets and Pods
#                              (which stay Pending: still no kubelet or scheduler)
#
# Webhooks registered by Service are called at the Service's EndpointSlice addresses
# (--enable-aggregator-routing: there is no kube-proxy to route a ClusterIP).
#
# Users (static token file): celer-e2e-admin (CELER_E2E_ADMIN_USER) in system:masters (admin.kubeconfig), and
# celer-e2e-webhook with no rights until RBAC grants some (celer.kubeconfig; e2e/run.sh applies
# e2e/manifests/rbac.yaml), always in the group celer:webhook; CELER_E2E_WEBHOOK_USER names it
# otherwise and CELER_E2E_WEBHOOK_GROUPS adds groups (comma-separated). Authorization is RBAC
# only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
state="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
api_port="${CELER_E2E_APISERVER_PORT:-16443}"
webhook_user="${CELER_E2E_WEBHOOK_USER:-celer-e2e-webhook}"
etcd_port="${CELER_E2E_ETCD_PORT:-12379}"
peer_port="$((etcd_port + 1))"
ready_timeout="${CELER_E2E_READY_TIMEOUT:-120}"
server="https://127.0.0.1:${api_port}"
admin_user="${CELER_E2E_ADMIN_USER:-celer-e2e-admin}"

log() { echo "control-plane: $*" >&2; }

# The pid in $1's pid file, if that process is still ours (its command line names the state
# directory, so a recycled pid is never signalled).
running_pid() {
  local file="$state/$1.pid" pid
  [ -f "$file" ] || return 1
  pid="$(cat "$file")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$state" || return 1
  echo "$pid"
}

# Stops the process group led by $1's process: TERM, then KILL after 15 s.
stop() {
  local name="$1" pid i
  if pid="$(running_pid "$name")"; then
    log "stopping $name (process group $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop in 15 s: killing"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$state/$name.pid"
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

env_lines() {
  cat <<ENV
export KUBECONFIG='$state/admin.kubeconfig'
export CELER_E2E_SERVER='$server'
export CELER_E2E_CA='$state/pki/ca.crt'
export CELER_E2E_TOKEN='$(cat "$state/admin.token")'
export CELER_E2E_WEBHOOK_KUBECONFIG='$state/celer.kubeconfig'
export CELER_E2E_STATE='$state'
ENV
}

certificates() {
  local pki="$state/pki"
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=celer-e2e-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf '%s\n' \
    "basicConstraints=CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc" \
    > "$pki/apiserver.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 2 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

kubeconfig() { # file user token
  local ca_data
  ca_data="$(base64 -w0 < "$state/pki/ca.crt")"
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: celer-e2e
  cluster:
    server: $server
    certificate-authority-data: $ca_data
users:
- name: $2
  user:
    token: $3
contexts:
- name: celer-e2e
  context: {cluster: celer-e2e, user: $2}
current-context: celer-e2e
KC
  chmod 600 "$1"
}

wait_ready() {
  local deadline=$(( $(date +%s) + ready_timeout )) token
  token="$(cat "$state/admin.token")"
  until curl -fsS --cacert "$state/pki/ca.crt" -H "Authorization: Bearer $token" \
      "$server/readyz" >/dev/null 2>&1; do
    if ! running_pid kube-apiserver >/dev/null; then
      log "kube-apiserver exited; the end of its log ($state/kube-apiserver.log):"
      tail -n 30 "$state/kube-apiserver.log" >&2 || true
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "kube-apiserver not ready after ${ready_timeout}s; /readyz says:"
      curl -sS --cacert "$state/pki/ca.crt" -H "Authorization: Bearer $token" \
        "$server/readyz?verbose" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

up() {
  if running_pid kube-apiserver >/dev/null || running_pid etcd >/dev/null; then
    log "already running (state in $state); run 'down' first"
    return 1
  fi
  for p in "$api_port" "$etcd_port" "$peer_port"; do
    if ! port_free "$p"; then
      log "port $p on 127.0.0.1 is in use (set CELER_E2E_APISERVER_PORT / CELER_E2E_ETCD_PORT)"
      return 1
    fi
  done
  local bin
  if [ -n "${CELER_E2E_BIN:-}" ]; then
    bin="$CELER_E2E_BIN"
  else
    bin="$("$here/build.sh")/bin"
  fi
  local started
  started=$(date +%s)
  rm -rf "$state"
  mkdir -p "$state"
  certificates
  openssl rand -hex 24 > "$state/admin.token"
  openssl rand -hex 24 > "$state/celer.token"
  {
    echo "$(cat "$state/admin.token"),$admin_user,$admin_user,\"system:masters\""
    echo "$(cat "$state/celer.token"),$webhook_user,$webhook_user,\"celer:webhook${CELER_E2E_WEBHOOK_GROUPS:+,$CELER_E2E_WEBHOOK_GROUPS}\""
    if [ -n "${CELER_E2E_EXTRA_TOKENS:-}" ]; then cat "$CELER_E2E_EXTRA_TOKENS"; fi
  } > "$state/tokens.csv"
  chmod 600 "$state/tokens.csv"

  log "starting etcd on 127.0.0.1:$etcd_port"
  # setsid: each server leads its own process group, which `down` signals whole.
  setsid "$bin/etcd" --name celer-e2e --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "celer-e2e=http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync --log-level warn \
    > "$state/etcd.log" 2>&1 < /dev/null &
  echo $! > "$state/etcd.pid"
  local i
  for i in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1 && break
    if ! running_pid etcd >/dev/null; then
      log "etcd exited:"; tail -n 20 "$state/etcd.log" >&2; return 1
    fi
    sleep 0.2
  done

  local authorization=(--authorization-mode RBAC)
  if [ -n "${CELER_E2E_AUTHORIZATION_CONFIG:-}" ]; then
    authorization=(--authorization-config "$CELER_E2E_AUTHORIZATION_CONFIG")
  fi
  log "starting kube-apiserver on $server"
  setsid "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$state/pki/apiserver.crt" --tls-private-key-file "$state/pki/apiserver.key" \
    --client-ca-file "$state/pki/ca.crt" \
    --token-auth-file "$state/tokens.csv" \
    "${authorization[@]}" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$state/pki/sa.pub" \
    --service-account-signing-key-file "$state/pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --allow-privileged=true \
    --disable-admission-plugins ServiceAccount \
    --endpoint-reconciler-type none \
    --enable-aggregator-routing=true \
    > "$state/kube-apiserver.log" 2>&1 < /dev/null &
  echo $! > "$state/kube-apiserver.pid"
  if ! wait_ready; then
    down
    return 1
  fi
  kubeconfig "$state/admin.kubeconfig" "$admin_user" "$(cat "$state/admin.token")"
  kubeconfig "$state/celer.kubeconfig" "$webhook_user" "$(cat "$state/celer.token")"
  if [ "${CELER_E2E_CONTROLLER_MANAGER:-}" = 1 ]; then
    if [ ! -x "$bin/kube-controller-manager" ]; then
      log "no kube-controller-manager in $bin"; down; return 1
    fi
    log "starting kube-controller-manager"
    # As the admin (no per-controller service accounts: there are no tokens to mint them
    # with); no HTTPS endpoint of its own; CSRs signed with the cluster CA, which
    # kube-apiserver trusts for client certificates.
    setsid "$bin/kube-controller-manager" \
      --kubeconfig "$state/admin.kubeconfig" \
      --controllers '*' \
      --use-service-account-credentials=false \
      --leader-elect=false \
      --secure-port 0 \
      --cluster-signing-cert-file "$state/pki/ca.crt" \
      --cluster-signing-key-file "$state/pki/ca.key" \
      --root-ca-file "$state/pki/ca.crt" \
      --service-account-private-key-file "$state/pki/sa.key" \
      --service-cluster-ip-range 10.0.0.0/24 \
      --concurrent-namespace-syncs 5 \
      > "$state/kube-controller-manager.log" 2>&1 < /dev/null &
    echo $! > "$state/kube-controller-manager.pid"
  fi
  log "ready in $(( $(date +%s) - started ))s (state and logs in $state)"
  env_lines
}

down() {
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
}

status() {
  local name pid rc=0
  for name in etcd kube-apiserver; do
    if pid="$(running_pid "$name")"; then
      echo "$name: running (pid $pid)"
    else
      echo "$name: stopped"; rc=1
    fi
  done
  return $rc
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) env_lines ;;
  status) status ;;
  *) echo "usage: $0 up|down|env|status" >&2; exit 2 ;;
esac
