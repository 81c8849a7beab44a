#!/usr/bin/env bash
# Starts and stops a peer engine (issue 15) as a local process against the e2e control plane
# (e2e/control-plane.sh), admission only, its webhooks reached by URL on loopback:
#
#   e2e/peers/peer.sh start kyverno       CRDs from Kyverno's module, namespace kyverno and
#                                         its two ConfigMaps, then Kyverno's admission
#                                         controller out of cluster (--serverIP): it makes its
#                                         own CA and certificate for that address and registers
#                                         its own webhooks; admission reports off (Kyverno's
#                                         background, reports and cleanup controllers are other
#                                         binaries, never started here)
#   e2e/peers/peer.sh start gatekeeper    CRDs from Gatekeeper's module, namespace
#                                         gatekeeper-system, a certificate made here for
#                                         127.0.0.1 (Gatekeeper's cert rotation off), then
#                                         Gatekeeper with the webhook, mutation-webhook and
#                                         generate operations only (generate makes each
#                                         template's Constraint CRD; no audit, no status
#                                         writers), a Pending Pod object standing in for its
#                                         Pod; its two webhooks are registered here by URL
#                                         for Pod CREATE and UPDATE, failurePolicy Fail
#   e2e/peers/peer.sh stop ENGINE         stops it (its whole process group), removes its
#                                         webhook configurations; nothing is left running
#   e2e/peers/peer.sh pid ENGINE          the running process's pid
#
# Expects the environment of `e2e/control-plane.sh env`. State (log, pid, certificates) is in
# $CELER_E2E_DIR/peers/ENGINE. Binaries come from e2e/peers/build.sh (built when missing).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(cd "$here/.." && pwd)"
repo="$(cd "$e2e/.." && pwd)"
action="${1:-}" engine="${2:-}"
case "$engine" in kyverno|gatekeeper) ;; *) sed -n '2,27p' "$0" >&2; exit 2 ;; esac
: "${CELER_E2E_SERVER:?run with the environment of e2e/control-plane.sh env}"
state="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}/peers/$engine"
mkdir -p "$state"
work="$state"
# shellcheck source=e2e/lib.sh
source "$e2e/lib.sh"
log() { echo "peer $engine: $*" >&2; }

running() {
  local pid
  [ -f "$state/pid" ] || return 1
  pid="$(cat "$state/pid")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

webhook_configs() {
  case "$engine" in
    kyverno)
      # Kyverno names its configurations kyverno-*; it leaves them behind when stopped.
      local kind
      for kind in validatingwebhookconfigurations mutatingwebhookconfigurations; do
        api GET "/apis/admissionregistration.k8s.io/v1/$kind"
        jq -r --arg k "$kind" '.items[]?.metadata.name | select(startswith("kyverno-")) | "\($k)/\(.)"' \
          "$work/body.json"
      done ;;
    gatekeeper)
      echo validatingwebhookconfigurations/gatekeeper-validating-webhook-configuration
      echo mutatingwebhookconfigurations/gatekeeper-mutating-webhook-configuration ;;
  esac
}

stop_peer() {
  local pid i c
  if pid="$(running)"; then
    log "stopping (process group $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$state/pid"
  for c in $(webhook_configs); do
    api DELETE "/apis/admissionregistration.k8s.io/v1/$c"
  done
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s while the peer runs.
wait_for() {
  local seconds="$1" what="$2" i; shift 2
  for i in $(seq 1 $((seconds * 2))); do
    if ! running >/dev/null; then
      log "exited while waiting for $what:"; tail -n 30 "$state/log" >&2; return 1
    fi
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "no $what after ${seconds}s; the log ends:"; tail -n 30 "$state/log" >&2
  return 1
}

crds_established() {
  python3 - "$1" <<'PY'
import json, os, ssl, sys, urllib.request, yaml, pathlib
ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
names = []
for f in sorted(pathlib.Path(sys.argv[1]).rglob("*.yaml")):
    for d in yaml.safe_load_all(f.read_text()):
        if d and d.get("kind") == "CustomResourceDefinition":
            names.append(d["metadata"]["name"])
for n in names:
    req = urllib.request.Request(os.environ["CELER_E2E_SERVER"] +
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + n)
    req.add_header("Authorization", "Bearer " + os.environ["CELER_E2E_TOKEN"])
    crd = json.load(urllib.request.urlopen(req, context=ctx))
    if not any(c["type"] == "Established" and c["status"] == "True"
               for c in crd.get("status", {}).get("conditions", [])):
        sys.exit(1)
PY
}

# wait_crds DIR: until every CRD in DIR is Established (60 s at most).
wait_crds() {
  local i
  for i in $(seq 1 60); do
    crds_established "$1" 2>/dev/null && return 0
    sleep 1
  done
  log "the CRDs of $1 are not Established after 60 s"
  return 1
}

start_kyverno() {
  local dir="$1" port
  port="$(free_port)"
  "$e2e/apply.py" "$dir/crds" >/dev/null
  wait_crds "$dir/crds" || return 1
  api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kyverno"}}'
  for cm in kyverno kyverno-metrics; do
    api POST /api/v1/namespaces/kyverno/configmaps \
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$cm\",\"namespace\":\"kyverno\"}}"
  done
  # The names Kyverno's chart gives these; out of cluster they only name objects it reads.
  KYVERNO_NAMESPACE=kyverno KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller \
  KYVERNO_DEPLOYMENT=kyverno-admission-controller KYVERNO_POD_NAME=kyverno-local \
  KYVERNO_SVC=kyverno-svc INIT_CONFIG=kyverno METRICS_CONFIG=kyverno-metrics \
  setsid "$dir/bin/kyverno" --kubeconfig "$KUBECONFIG" \
    --serverIP "127.0.0.1:$port" --webhookServerHost 127.0.0.1 --webhookServerPort "$port" \
    --caSecretName kyverno-svc.kyverno.svc.kyverno-tls-ca \
    --tlsSecretName kyverno-svc.kyverno.svc.kyverno-tls-pair \
    --admissionReports=false --disableMetrics --metricsPort "$(free_port)" \
    --autoMemLimitEnabled=false --controllerRuntimeMetricsAddress 0 \
    --loggingFormat text --disableLogColor \
    > "$state/log" 2>&1 < /dev/null &
  echo $! > "$state/pid"
  echo "$port" > "$state/port"
  disown
  # Ready: the webhook server answers, and Kyverno has registered its resource webhooks.
  wait_for 180 "readiness on :$port" curl -fsk "https://127.0.0.1:$port/health/readiness"
  wait_for 180 "webhook configuration" api_has \
    /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kyverno-resource-validating-webhook-cfg
}

start_gatekeeper() {
  local dir="$1" port health certs="$state/certs"
  port="$(free_port)" health="$(free_port)"
  "$e2e/apply.py" "$dir/crds" >/dev/null
  wait_crds "$dir/crds" || return 1
  api POST /api/v1/namespaces \
    '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gatekeeper-system","labels":{"admission.gatekeeper.sh/ignore":"no-self-managing"}}}'
  # Gatekeeper owns its per-Pod status objects by its Pod, which it reads by POD_NAME: a Pod
  # object stands in for the process (it stays Pending: there is no kubelet here).
  api POST /api/v1/namespaces/gatekeeper-system/pods \
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"gatekeeper-local","namespace":"gatekeeper-system"},"spec":{"automountServiceAccountToken":false,"containers":[{"name":"gatekeeper","image":"gatekeeper:local"}]}}'
  mkdir -p "$certs"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=gatekeeper-e2e-ca" \
    -keyout "$certs/ca.key" -out "$certs/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$certs/tls.key" -out "$certs/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' > "$certs/ext.cnf"
  openssl x509 -req -in "$certs/tls.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" \
    -CAcreateserial -days 2 -extfile "$certs/ext.cnf" -out "$certs/tls.crt" 2>/dev/null
  POD_NAMESPACE=gatekeeper-system POD_NAME=gatekeeper-local NAMESPACE=gatekeeper-system \
  KUBECONFIG="$KUBECONFIG" setsid "$dir/bin/gatekeeper" \
    --operation webhook --operation mutation-webhook --operation generate \
    --disable-cert-rotation --cert-dir "$certs" --host 127.0.0.1 --port "$port" \
    --health-addr "127.0.0.1:$health" --metrics-addr 0 --enable-external-data=false \
    > "$state/log" 2>&1 < /dev/null &
  echo $! > "$state/pid"
  echo "$port" > "$state/port"
  disown
  wait_for 180 "readiness on :$health" curl -fsS "http://127.0.0.1:$health/readyz"
  local ca rules
  ca="$(base64 -w0 < "$certs/ca.crt")"
  rules='[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["pods"],"scope":"Namespaced"}]'
  local ignore='{"matchExpressions":[{"key":"admission.gatekeeper.sh/ignore","operator":"DoesNotExist"}]}'
  api POST /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations \
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"gatekeeper-validating-webhook-configuration\"},\"webhooks\":[{\"name\":\"validation.gatekeeper.sh\",\"clientConfig\":{\"url\":\"https://127.0.0.1:$port/v1/admit\",\"caBundle\":\"$ca\"},\"rules\":$rules,\"namespaceSelector\":$ignore,\"failurePolicy\":\"Fail\",\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\",\"v1beta1\"],\"timeoutSeconds\":3}]}"
  [ "$status" = 201 ] || { log "validating webhook not registered ($status): $(message)"; return 1; }
  api POST /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations \
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"gatekeeper-mutating-webhook-configuration\"},\"webhooks\":[{\"name\":\"mutation.gatekeeper.sh\",\"clientConfig\":{\"url\":\"https://127.0.0.1:$port/v1/mutate\",\"caBundle\":\"$ca\"},\"rules\":$rules,\"namespaceSelector\":$ignore,\"failurePolicy\":\"Fail\",\"sideEffects\":\"None\",\"reinvocationPolicy\":\"Never\",\"admissionReviewVersions\":[\"v1\",\"v1beta1\"],\"timeoutSeconds\":1}]}"
  [ "$status" = 201 ] || { log "mutating webhook not registered ($status): $(message)"; return 1; }
}

api_has() { api GET "$1"; [ "$status" = 200 ]; }

case "$action" in
  start)
    if running >/dev/null; then log "already running"; exit 0; fi
    stop_peer
    dir="$("$here/build.sh" "$engine")"
    log "starting $(basename "$dir")"
    if ! "start_$engine" "$dir"; then stop_peer; exit 1; fi
    log "ready (pid $(cat "$state/pid"), port $(cat "$state/port"))"
    ;;
  stop) stop_peer ;;
  pid) running ;;
  *) sed -n '2,27p' "$0" >&2; exit 2 ;;
esac
