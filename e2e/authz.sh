#!/usr/bin/env bash
# celer as kube-apiserver's authorization webhook, end to end: celer serves examples/authz's
# AuthorizationPolicies on /authorize; kube-apiserver runs with --authorization-config
# (`celer authz config`: celer first, then Node and RBAC); test users by static token, each
# bound to cluster-admin by RBAC, so every 403 below is celer's Deny.
#
#   e2e/authz.sh
#
# Environment: CELER_BIN (default: target/debug/celer, built if missing); the control plane's
# settings (CELER_E2E_APISERVER_PORT, CELER_E2E_ETCD_PORT, CELER_E2E_DIR) as e2e/control-plane.sh
# reads them; CELER_E2E_WORK, scratch [target/e2e/authz].
#
# Checks:
#   Z1 alice (cluster-admin by RBAC) cannot list Pods in kube-system; the reason is celer's
#   Z2 alice lists Pods in default (celer: NoOpinion, RBAC allows)
#   Z3 system:kube-scheduler lists Pods in kube-system (the exception)
#   Z4 nobody deletes StorageClass ceph, nor deletecollection StorageClasses; fast is deleted
#   Z5 no port-forward into kube-system for system:kube-controller-manager
#   Z6 with celer down (failurePolicy NoOpinion): the cached Deny holds for unauthorizedTTL,
#      then RBAC decides
#   Z7 failurePolicy Deny (the API server restarted), celer down: what the policies match is
#      refused (kube-apiserver answers 500: the webhook's error); what they do not match never
#      reaches celer (matchConditions) and is served
#   Z8 (before Z6) the same rules as a Rego module, swapped in by a reload: alice's kube-system
#      Pods, the scheduler's exception, deletecollection of StorageClasses
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/authz}"
rm -rf "$work" && mkdir -p "$work"
CELER_BIN="${CELER_BIN:-$repo/target/debug/celer}"
[ -x "$CELER_BIN" ] || (cd "$repo" && cargo build -p celer)
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

cleanup() {
  stop_celer KILL
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

# A copy, so that Z8 can swap in the Rego module by changing the file (celer reloads it).
cp "$repo/examples/authz/policies.yaml" "$work/policies.yaml"
start_celer authz --policies "$work/policies.yaml"
cat > "$work/webhook.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: celer
  cluster:
    server: https://127.0.0.1:$celer_port/authorize
    certificate-authority: $work/tls-authz/ca.crt
users:
- name: kube-apiserver
  user: {}
contexts:
- name: celer
  context: {cluster: celer, user: kube-apiserver}
current-context: celer
KC
# Short TTLs so that Z6 need not wait long for the cached answers to expire.
"$CELER_BIN" authz config --policy "$repo/examples/authz/policies.yaml" \
  --authorized-ttl 2s --unauthorized-ttl 2s --failure-policy NoOpinion \
  --kubeconfig-file "$work/webhook.kubeconfig" > "$work/authorization-config.yaml"

for user in alice system:kube-scheduler system:kube-controller-manager; do
  echo "$(openssl rand -hex 24),$user,$user,\"e2e:users\""
done > "$work/tokens.csv"
export CELER_E2E_AUTHORIZATION_CONFIG="$work/authorization-config.yaml"
export CELER_E2E_EXTRA_TOKENS="$work/tokens.csv"
eval "$("$here/control-plane.sh" up)"
token_of() { grep ",$1," "$work/tokens.csv" | cut -d, -f1; }

# as USER METHOD PATH [BODY]: the API as USER; sets $status.
as() {
  local user="$1"; shift
  local saved="$CELER_E2E_TOKEN"
  CELER_E2E_TOKEN="$(token_of "$user")"
  api "$@"
  CELER_E2E_TOKEN="$saved"
}

api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"e2e-users-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"e2e:users"}]}'
[ "$status" = 201 ] || { echo "binding: $status $(cat "$work/body.json")" >&2; exit 1; }
for sc in ceph fast; do
  api POST /apis/storage.k8s.io/v1/storageclasses \
    '{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"'"$sc"'"},"provisioner":"example.com/none"}'
  [ "$status" = 201 ] || { echo "storageclass $sc: $status" >&2; exit 1; }
done

as alice GET "$(pods kube-system)"
if [ "$status" = 403 ] && message | grep -q "pods in kube-system are off limits to alice"; then
  ok "Z1 alice cannot list Pods in kube-system"
else bad "Z1 alice cannot list Pods in kube-system" "$status $(message)"; fi

as alice GET "$(pods default)"
[ "$status" = 200 ] && ok "Z2 alice lists Pods in default" || bad "Z2 alice lists Pods in default" "$status $(message)"

as system:kube-scheduler GET "$(pods kube-system)"
[ "$status" = 200 ] && ok "Z3 the scheduler lists Pods in kube-system" || bad "Z3 the scheduler lists Pods in kube-system" "$status $(message)"

as alice DELETE /apis/storage.k8s.io/v1/storageclasses/ceph; s1="$status"
as alice DELETE /apis/storage.k8s.io/v1/storageclasses; s2="$status"
as alice DELETE /apis/storage.k8s.io/v1/storageclasses/fast; s3="$status"
if [ "$s1" = 403 ] && [ "$s2" = 403 ] && [ "$s3" = 200 ]; then
  ok "Z4 StorageClass ceph is protected from delete and deletecollection"
else bad "Z4 StorageClass ceph is protected from delete and deletecollection" "delete ceph $s1, deletecollection $s2, delete fast $s3"; fi

as system:kube-controller-manager POST "$(pods kube-system etcd-0)/portforward"
if [ "$status" = 403 ] && message | grep -q "no port-forward to kube-system"; then
  ok "Z5 no port-forward into kube-system"
else bad "Z5 no port-forward into kube-system" "$status $(message)"; fi

# The same rules as a Rego module (examples/authz/rego-policies.yaml) in place of the CEL
# policies: celer reloads the file; the API server's cached answers expire after 2 s.
reloads_before="$(grep -c "policies reloaded" "$celer_log" || true)"
cp "$repo/examples/authz/rego-policies.yaml" "$work/policies.yaml"
for _ in $(seq 1 50); do
  [ "$(grep -c "policies reloaded" "$celer_log" || true)" -gt "$reloads_before" ] && break
  sleep 0.2
done
sleep 2.5
as alice GET "$(pods kube-system)"; r1="$status" m1="$(message)"
as system:kube-scheduler GET "$(pods kube-system)"; r2="$status"
as alice DELETE /apis/storage.k8s.io/v1/storageclasses; r3="$status" m3="$(message)"
if [ "$r1" = 403 ] && [[ "$m1" == *'"rego-write-up"'*"pods in kube-system are off limits to alice"* ]] \
  && [ "$r2" = 200 ] && [ "$r3" = 403 ] && [[ "$m3" == *"deletecollection of StorageClasses would delete ceph"* ]]; then
  ok "Z8 the same rules in Rego: kube-system Pods, the scheduler's exception, deletecollection"
else bad "Z8 the same rules in Rego: kube-system Pods, the scheduler's exception, deletecollection" \
  "alice pods $r1 ($m1), scheduler $r2, deletecollection $r3 ($m3)"; fi

as alice GET "$(pods kube-system)"
stop_celer KILL
as alice GET "$(pods kube-system)"; cached="$status"
sleep 3
as alice GET "$(pods kube-system)"
if [ "$cached" = 403 ] && [ "$status" = 200 ]; then
  ok "Z6 celer down, failurePolicy NoOpinion: cached Deny, then RBAC decides"
else bad "Z6 celer down, failurePolicy NoOpinion: cached Deny, then RBAC decides" "cached $cached, after the TTL $status"; fi

"$here/control-plane.sh" down >/dev/null 2>&1
"$CELER_BIN" authz config --policy "$repo/examples/authz/policies.yaml" \
  --authorized-ttl 2s --unauthorized-ttl 2s --failure-policy Deny \
  --kubeconfig-file "$work/webhook.kubeconfig" > "$work/authorization-config.yaml"
eval "$("$here/control-plane.sh" up)"
api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"e2e-users-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"e2e:users"}]}'
# kube-apiserver answers a webhook error with 500 (its authorization filter reports the
# error), a plain Deny with 403: either refuses.
as alice GET "$(pods default)"; matched="$status"; matched_message="$(message || head -c 300 "$work/body.json")"
as alice GET /api/v1/namespaces/default/configmaps; unmatched="$status"
echo "  (Z7: pods in default with celer down: $matched $matched_message)"
if { [ "$matched" = 403 ] || [ "$matched" = 500 ]; } && [ "$unmatched" = 200 ]; then
  ok "Z7 celer down, failurePolicy Deny: matched requests refused, unmatched ones served"
else bad "Z7 celer down, failurePolicy Deny: matched requests refused, unmatched ones served" "pods $matched, configmaps $unmatched"; fi

echo "authz e2e: $pass passed, $fail failed"
[ "$fail" = 0 ] || { printf 'failed: %s\n' "${failed[@]}"; exit 1; }
