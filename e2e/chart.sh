#!/usr/bin/env bash
# The Helm chart (charts/celer) against a real kube-apiserver with kube-controller-manager
# (garbage collection): what it renders is accepted, what it installs works, and uninstalling
# leaves nothing behind. The offline checks (lint, template, Pod Security by celer apply) are
# in scripts/chart.sh.
#
#   e2e/chart.sh
#
# Environment: CELER_BIN (default target/debug/celer, built if missing); the control plane's
# settings as e2e/control-plane.sh reads them; CELER_E2E_WORK, scratch [target/e2e/chart].
#
# Checks:
#   K1 the default and the full values (charts/celer/ci/full-values.yaml) render objects the API
#      server accepts with server-side dry-run (CRDs applied first, ServiceMonitor and
#      PrometheusRule CRDs from prometheus-operator's module, cert-manager's from its module),
#      with no warning, in a namespace that enforces and warns on Pod Security restricted
#   K2 `helm install` with the default values, then `celer serve` and `celer controller` started
#      with exactly the arguments the chart renders (only --in-cluster becomes the kubeconfig of
#      the chart's own ServiceAccount, ports are free ones, mounted files are local copies): the
#      admission replica makes the TLS Secret, registers its webhooks (owned by the chart's
#      ClusterRole, the Secret's CA as caBundle, the Service as endpoint)
#   K3 through the API server, at the Service's address: a Pod that breaks a policy is denied,
#      one that meets it is admitted, and every webhook that can refuse skips the release's
#      namespace and kube-system
#   K4 the controller leads (its Lease) and reports a Pod created before the policy
#   K7 `helm upgrade` changing a value (webhook.timeoutSeconds): the admission process
#      restarted with the new rendering changes the webhooks; the CA and the owner stay, and
#      requests are still judged (run before K5)
#   K5 `helm uninstall`: no webhook configuration and no Secret left (garbage collection of
#      what celer made at run time), the CRDs kept (crds.keep)
#   K6 with crds.keep=false, uninstall removes the CRDs too
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/chart}"
rm -rf "$work" && mkdir -p "$work"
CELER_BIN="${CELER_BIN:-$repo/target/debug/celer}"
[ -x "$CELER_BIN" ] || (cd "$repo" && cargo build -p celer)
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
chart="$repo/charts/celer"
ns=celer-system
prometheus_operator=v0.85.0
cert_manager=v1.21.2

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

helm="$(bash "$here/helm-build.sh")"
# The CRDs of the optional kinds the full values render, from their projects' Go modules.
module_dir() {
  (cd /tmp && GOFLAGS=-mod=mod go mod download -json "$1@$2") \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}
po="$(module_dir github.com/prometheus-operator/prometheus-operator "$prometheus_operator")"
cm="$(module_dir github.com/cert-manager/cert-manager "$cert_manager")"
extra_crds=("$po/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
  "$po/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"
  "$cm/deploy/crds/cert-manager.io_certificates.yaml" "$cm/deploy/crds/cert-manager.io_issuers.yaml"
  "$cm/deploy/crds/cert-manager.io_clusterissuers.yaml")

export CELER_E2E_CONTROLLER_MANAGER=1
env_lines="$("$here/control-plane.sh" up)" || { echo "FAIL control-plane: did not start (see above)"; exit 1; }
eval "$env_lines"

namespace() { # namespace NAME: created, enforcing and warning on Pod Security restricted
  api POST /api/v1/namespaces "$(jq -cn --arg n "$1" '{apiVersion: "v1", kind: "Namespace",
    metadata: {name: $n, labels: {"pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted"}}}')"
  [ "$status" = 201 ] || { echo "FAIL namespace $1: HTTP $status: $(message | head -c 300)"; exit 1; }
}
namespace "$ns"
namespace apps

echo "--- K1 server-side dry-run of the rendered chart"
python3 "$here/chart-apply.py" --apply "${extra_crds[@]}" > "$work/extra-crds.log" \
  || { cat "$work/extra-crds.log"; echo "FAIL K1 setup: the optional kinds' CRDs"; exit 1; }
k1=ok
for values in "" "$chart/ci/full-values.yaml"; do
  label="${values:+$(basename "$values")}"; label="${label:-default values}"
  args=(); [ -n "$values" ] && args=(-f "$values")
  "$helm" template celer "$chart" --namespace "$ns" "${args[@]}" > "$work/rendered.yaml"
  if python3 "$here/chart-apply.py" --dry-run --namespace "$ns" "$work/rendered.yaml" > "$work/dry-run.log"; then
    echo "  $label: $(tail -n 1 "$work/dry-run.log")"
  else
    grep -v '^ok ' "$work/dry-run.log" | head -20
    k1="refused or warned ($label)"
  fi
done
[ "$k1" = ok ] && ok K1 || bad K1 "$k1"

echo "--- K2 helm install; both roles started with the arguments the chart renders"
"$helm" install celer "$chart" --namespace "$ns" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log"; echo "FAIL K2: helm install"; exit 1; }
"$helm" get manifest celer --namespace "$ns" > "$work/manifest.yaml"

# A kubeconfig of a ServiceAccount of the release (a bound token, as a Pod's).
sa_kubeconfig() {
  api POST "/api/v1/namespaces/$ns/serviceaccounts/$1/token" '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}'
  [ "$status" = 201 ] || { echo "FAIL token for $1: HTTP $status: $(message | head -c 300)"; exit 1; }
  local token
  token="$(jq -r .status.token "$work/body.json")"
  cat > "$work/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$CELER_E2E_SERVER", certificate-authority: "$CELER_E2E_CA"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: sa, context: {cluster: e2e, user: sa, namespace: $ns}}]
current-context: sa
KC
}
sa_kubeconfig celer-admission
sa_kubeconfig celer-controller

# The mounted token, as the Pods would see it.
mkdir -p "$work/etc/admission-reports"
api GET "/api/v1/namespaces/$ns/secrets/celer-admission-reports"
jq -r '.data.token' "$work/body.json" | base64 -d > "$work/etc/admission-reports/token"

admission_port="$(free_port)" admission_metrics="$(free_port)" controller_metrics="$(free_port)"
# args DEPLOYMENT KUBECONFIG: the container's args, with only what must differ off-cluster
# changed (one per line).
args() {
  python3 - "$work/manifest.yaml" "$1" "$2" "$work/etc" "$admission_port" "$admission_metrics" "$controller_metrics" <<'PY'
import sys, yaml
manifest, name, kubeconfig, etc, port, metrics, cmetrics = sys.argv[1:]
for doc in yaml.safe_load_all(open(manifest)):
    if doc and doc["kind"] == "Deployment" and doc["metadata"]["name"] == name:
        for a in doc["spec"]["template"]["spec"]["containers"][0]["args"]:
            if a == "--in-cluster":
                a = "--kubeconfig=" + kubeconfig
            a = a.replace("/etc/celer", etc)
            if a.startswith("--listen="):
                a = "--listen=0.0.0.0:" + port
            if a.startswith("--metrics-listen="):
                a = "--metrics-listen=127.0.0.1:" + metrics
            if a.startswith("--metrics-addr="):
                a = "--metrics-addr=127.0.0.1:" + cmetrics
            print(a)
        break
else:
    sys.exit(f"no Deployment {name} rendered")
PY
}
mapfile -t admission_args < <(args celer-admission "$work/celer-admission.kubeconfig")
mapfile -t controller_args < <(args celer-controller "$work/celer-controller.kubeconfig")
printf '%s\n' "${admission_args[@]}" > "$work/admission.args"
printf '%s\n' "${controller_args[@]}" > "$work/controller.args"

POD_NAME=celer-admission-e2e POD_NAMESPACE="$ns" setsid "$CELER_BIN" "${admission_args[@]}" \
  > "$work/admission.log" 2>&1 < /dev/null &
pids+=($!)
admission_pid=$!
POD_NAME=celer-controller-e2e POD_IP=127.0.0.1 setsid "$CELER_BIN" "${controller_args[@]}" \
  > "$work/controller.log" 2>&1 < /dev/null &
pids+=($!)
controller_pid=$!

ready=false
for _ in $(seq 1 150); do
  kill -0 "$admission_pid" 2>/dev/null || break
  if curl -fsS "http://127.0.0.1:$admission_metrics/readyz" >/dev/null 2>&1 \
      && grep -q "webhook configurations registered" "$work/admission.log"; then
    ready=true; break
  fi
  sleep 0.2
done
if ! $ready; then
  tail -n 20 "$work/admission.log"
  bad K2 "celer serve with the chart's arguments did not become ready"
else
  k2=ok
  api GET "/api/v1/namespaces/$ns/secrets/celer-tls"
  [ "$status" = 200 ] || k2="no TLS Secret celer-tls: HTTP $status"
  ca="$(jq -r '.data["ca.crt"] // empty' "$work/body.json")"
  api GET /apis/rbac.authorization.k8s.io/v1/clusterroles/celer-admission
  role_uid="$(jq -r .metadata.uid "$work/body.json")"
  api GET /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer
  if [ "$status" != 200 ]; then
    k2="no ValidatingWebhookConfiguration celer: HTTP $status"
  else
    owner="$(jq -r '[.metadata.ownerReferences[]? | select(.kind == "ClusterRole") | .uid] | join(",")' "$work/body.json")"
    [ "$owner" = "$role_uid" ] || k2="the webhook configuration's owner is '$owner', not the ClusterRole ($role_uid)"
    bundle="$(jq -r '.webhooks[0].clientConfig.caBundle' "$work/body.json")"
    [ -n "$ca" ] && [ "$bundle" = "$ca" ] || k2="the caBundle is not the Secret's ca.crt"
    service="$(jq -r '.webhooks[0].clientConfig.service | "\(.namespace)/\(.name):\(.port)"' "$work/body.json")"
    [ "$service" = "$ns/celer-admission:443" ] || k2="the webhook names the Service $service"
  fi
  [ "$k2" = ok ] && ok K2 || bad K2 "$k2"
fi

echo "--- K3 a request through the API server, at the Service's address"
host_ip="$(ip -4 route get 192.0.2.1 2>/dev/null | sed -nE 's/.* src ([0-9.]+).*/\1/p' | sed -n 1p)"
case "$host_ip" in ""|127.*) host_ip="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | sed -n 1p)" ;; esac
# Before the policy: a Pod that will fail it, for the controller's report (K4).
latest_pod() {
  pod "$1" restricted | jq -c '.spec.containers[0].image = "busybox:latest"'
}
api POST "$(pods apps)" "$(latest_pod before)"
[ "$status" = 201 ] || { echo "FAIL K3 setup: Pod apps/before: HTTP $status: $(message | head -c 300)"; exit 1; }
policy="$(jq -cn '{apiVersion: "policies.kyverno.io/v1", kind: "ValidatingPolicy",
  metadata: {name: "no-latest-tag"},
  spec: {matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: ["v1"],
           operations: ["CREATE", "UPDATE"], resources: ["pods"]}]},
         validations: [{expression: "object.spec.containers.all(c, !c.image.endsWith(\":latest\"))",
                        message: "images must not use the latest tag"}]}}')"
api POST /apis/policies.kyverno.io/v1/validatingpolicies "$policy"
[ "$status" = 201 ] || { echo "FAIL K3 setup: ValidatingPolicy: HTTP $status: $(message | head -c 300)"; exit 1; }
if [ -z "$host_ip" ]; then
  bad K3 "no non-loopback address here for the Service's EndpointSlice"
else
  slice="$(jq -cn --arg ip "$host_ip" --argjson port "$admission_port" --arg ns "$ns" '{apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice", metadata: {name: "celer-admission-e2e", namespace: $ns,
      labels: {"kubernetes.io/service-name": "celer-admission", "endpointslice.kubernetes.io/managed-by": "celer-e2e"}},
    addressType: "IPv4", ports: [{name: "https", port: $port, protocol: "TCP"}],
    endpoints: [{addresses: [$ip], conditions: {ready: true}}]}')"
  api POST "/apis/discovery.k8s.io/v1/namespaces/$ns/endpointslices" "$slice"
  [ "$status" = 201 ] || { echo "FAIL K3 setup: EndpointSlice: HTTP $status: $(message | head -c 300)"; exit 1; }
  k3="the Pod was never denied"
  for _ in $(seq 1 100); do
    api POST "$(pods apps)?dryRun=All" "$(latest_pod after)"
    if [ "$status" = 400 ] || [ "$status" = 422 ] || [ "$status" = 403 ]; then
      if message | grep -q "images must not use the latest tag"; then k3=ok; else k3="denied, but: $(message)"; fi
      break
    fi
    sleep 0.2
  done
  if [ "$k3" = ok ]; then
    api POST "$(pods apps)?dryRun=All" "$(pod fine restricted)"
    [ "$status" = 201 ] || k3="a Pod that meets the policy was refused: HTTP $status: $(message | head -c 200)"
  fi
  # Every webhook that can refuse (failurePolicy Fail) skips the release's namespace and
  # kube-system, and there is one (the policy's).
  api GET /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer
  cp "$work/body.json" "$work/validating-webhooks.json"
  jq -e --arg ns "$ns" '[.webhooks[] | select(.failurePolicy == "Fail")] as $hooks
    | ($hooks | length) > 0 and ($hooks | all([.namespaceSelector.matchExpressions[]?
        | select(.key == "kubernetes.io/metadata.name" and .operator == "NotIn") | .values[]]
        | (index($ns) != null) and (index("kube-system") != null)))' \
    "$work/validating-webhooks.json" >/dev/null || k3="a webhook with failurePolicy Fail does not skip $ns and kube-system (see validating-webhooks.json)"
  [ "$k3" = ok ] && ok K3 || bad K3 "$k3"
fi

echo "--- K4 the controller leads and reports"
k4="no report for apps/before"
api GET "/apis/coordination.k8s.io/v1/namespaces/$ns/leases/celer-controller"
holder="$(jq -r '.spec.holderIdentity // empty' "$work/body.json")"
for _ in $(seq 1 150); do
  api GET "/apis/openreports.io/v1alpha1/namespaces/apps/reports"
  if jq -e '.items[] | .results[]? | select(.policy == "no-latest-tag" and .result == "fail")' "$work/body.json" >/dev/null 2>&1; then
    k4=ok; break
  fi
  sleep 0.2
done
api GET "/apis/coordination.k8s.io/v1/namespaces/$ns/leases/celer-controller"
holder="$(jq -r '.spec.holderIdentity // empty' "$work/body.json")"
[ "$holder" = celer-controller-e2e ] || k4="the Lease's holder is '$holder'"
[ "$k4" = ok ] && ok K4 || { tail -n 5 "$work/controller.log"; bad K4 "$k4"; }

echo "--- K7 helm upgrade: a changed value reaches the webhooks; the certificate and the owner stay"
k7=ok
api GET "/api/v1/namespaces/$ns/secrets/celer-tls"
ca_before="$(jq -r '.data["ca.crt"] // empty' "$work/body.json")"
"$helm" upgrade celer "$chart" --namespace "$ns" --reuse-values --set webhook.timeoutSeconds=5 \
  > "$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log"; echo "FAIL K7: helm upgrade"; exit 1; }
"$helm" get manifest celer --namespace "$ns" > "$work/manifest.yaml"
# The admission Pod rolls: the old process goes, one with the new arguments comes.
kill -TERM -- "-$admission_pid" 2>/dev/null || kill -TERM "$admission_pid" 2>/dev/null || true
for _ in $(seq 1 100); do kill -0 "$admission_pid" 2>/dev/null || break; sleep 0.1; done
mapfile -t admission_args < <(args celer-admission "$work/celer-admission.kubeconfig")
POD_NAME=celer-admission-e2e-2 POD_NAMESPACE="$ns" setsid "$CELER_BIN" "${admission_args[@]}" \
  > "$work/admission-2.log" 2>&1 < /dev/null &
pids+=($!)
admission_pid=$!
timeout_now=""
for _ in $(seq 1 150); do
  api GET /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer
  timeout_now="$(jq -r '[.webhooks[] | select(.failurePolicy == "Fail") | .timeoutSeconds] | unique | join(",")' "$work/body.json")"
  [ "$timeout_now" = 5 ] && break
  sleep 0.2
done
[ "$timeout_now" = 5 ] || k7="the webhooks' timeoutSeconds is '$timeout_now', not 5"
owner="$(jq -r '[.metadata.ownerReferences[]? | select(.kind == "ClusterRole") | .uid] | join(",")' "$work/body.json")"
api GET /apis/rbac.authorization.k8s.io/v1/clusterroles/celer-admission
[ "$owner" = "$(jq -r .metadata.uid "$work/body.json")" ] || k7="after the upgrade the owner is '$owner', not the ClusterRole"
api GET "/api/v1/namespaces/$ns/secrets/celer-tls"
[ "$(jq -r '.data["ca.crt"] // empty' "$work/body.json")" = "$ca_before" ] || k7="the upgrade changed the CA"
api POST "$(pods apps)?dryRun=All" "$(latest_pod again)"
case "$status" in 400|403|422) ;; *) k7="after the upgrade a Pod breaking the policy got HTTP $status" ;; esac
[ "$k7" = ok ] && ok K7 || bad K7 "$k7"

echo "--- K5 helm uninstall leaves nothing behind but the CRDs"
"$helm" uninstall celer --namespace "$ns" > "$work/uninstall.log" 2>&1 \
  || { cat "$work/uninstall.log"; echo "FAIL K5: helm uninstall"; exit 1; }
# The Pods end with the Deployments.
for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
leftovers() {
  local left=() kind
  for kind in validatingwebhookconfigurations mutatingwebhookconfigurations; do
    api GET "/apis/admissionregistration.k8s.io/v1/$kind"
    left+=($(jq -r '.items[].metadata.name' "$work/body.json" | sed "s/^/$kind\//"))
  done
  api GET "/api/v1/namespaces/$ns/secrets"
  left+=($(jq -r '.items[].metadata.name' "$work/body.json" | sed 's/^/secret\//'))
  printf '%s\n' "${left[@]}"
}
k5=ok
for _ in $(seq 1 150); do
  left="$(leftovers)"
  [ -z "$left" ] && break
  sleep 0.2
done
[ -z "$left" ] || k5="left behind: $(echo "$left" | tr '\n' ' ')"
api GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/validatingpolicies.policies.kyverno.io
[ "$status" = 200 ] || k5="the CRDs were not kept: HTTP $status"
[ "$k5" = ok ] && ok K5 || bad K5 "$k5"

echo "--- K6 with crds.keep=false, uninstall removes the CRDs"
api DELETE /apis/policies.kyverno.io/v1/validatingpolicies/no-latest-tag
"$helm" install celer "$chart" --namespace "$ns" --set crds.keep=false --set controller.enabled=false \
  > "$work/install2.log" 2>&1 || { cat "$work/install2.log"; echo "FAIL K6: helm install"; exit 1; }
"$helm" uninstall celer --namespace "$ns" > "$work/uninstall2.log" 2>&1 \
  || { cat "$work/uninstall2.log"; echo "FAIL K6: helm uninstall"; exit 1; }
k6="CRDs left"
for _ in $(seq 1 100); do
  api GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions
  n="$(jq '[.items[] | select(.metadata.labels["app.kubernetes.io/part-of"] == "celer")] | length' "$work/body.json")"
  [ "$n" = 0 ] && { k6=ok; break; }
  k6="$n CRDs of the release left"
  sleep 0.2
done
[ "$k6" = ok ] && ok K6 || bad K6 "$k6"

echo "chart e2e: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ "$fail" = 0 ]
