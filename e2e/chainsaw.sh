#!/usr/bin/env bash
# Kyverno's own chainsaw conformance tests (the corpus's kyverno/test/conformance/chainsaw),
# run by the chainsaw binary against the e2e kube-apiserver (e2e/control-plane.sh) with celer
# in Kyverno's place: `celer crds` installed, e2e/manifests and e2e/chainsaw/rbac.yaml
# applied, `celer serve --policies-from-cluster --register-webhooks` as the webhook user. The
# tests run from a scratch copy under target/ (chainsaw writes next to them); the corpus is
# only read. Prints per folder `passed/failed/skipped`, each failure with its test and the
# first lines of its reason, each skip with the rule's reason (e2e/chainsaw-tests.py says the
# rule); the summary line is `chainsaw: N passed, M failed, K skipped`. The run fails when the
# passed count falls below e2e/chainsaw.ratchet, and says so when it rises above it.
#
#   e2e/chainsaw.sh [FOLDER...]
#
# FOLDERs (default: all of them): validating-policies mutating-policies
# namespaced-validating-policies namespaced-mutating-policies exceptions cel (the ClusterPolicy
# validate.cel tests); any other folder of the corpus's chainsaw tests may be named too
# (deleting-policies namespaced-deleting-policies: about 12 minutes, their tests wait for a
# cron minute one after another). The ratchet is checked only for the default set (or CELER_CHAINSAW_RATCHET
# naming another line of e2e/chainsaw.ratchet).
#
# Environment: CELER_BIN (default: `cargo build -p celer`, target/debug/celer), CELER_CORPUS,
# CELER_CHAINSAW_PARALLEL [4], CELER_CHAINSAW_ASSERT_TIMEOUT [20s], CELER_E2E_KEEP=1, and the
# settings of e2e/control-plane.sh and e2e/chainsaw-build.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/chainsaw}"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
# The user Kyverno's tests expect to see in userInfo (kubeadm's admin).
export CELER_E2E_ADMIN_USER="${CELER_E2E_ADMIN_USER:-kubernetes-admin}"
corpus="${CELER_CORPUS:-$repo/../shared/corpus}"
chainsaw_dir="$corpus/kyverno/test/conformance/chainsaw"
all=(validating-policies mutating-policies namespaced-validating-policies namespaced-mutating-policies exceptions cel)
folders=("$@")
ratchet_line="${CELER_CHAINSAW_RATCHET:-}"
if [ ${#folders[@]} -eq 0 ]; then
  folders=("${all[@]}")
  ratchet_line="${ratchet_line:-all}"
fi
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

chainsaw_pid=""
controller_pid=""
cleanup() {
  [ -n "$chainsaw_pid" ] && kill "$chainsaw_pid" 2>/dev/null
  [ -n "$controller_pid" ] && kill -TERM "$controller_pid" 2>/dev/null
  stop_celer TERM
  if [ "${CELER_E2E_KEEP:-}" != 1 ]; then
    "$here/control-plane.sh" down
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -d "$chainsaw_dir/_step-templates" ] || { echo "FAIL corpus: $chainsaw_dir missing"; exit 1; }
command -v kubectl >/dev/null || echo "note: kubectl is not on PATH: tests whose scripts run it are skipped"
started=$(date +%s)

echo "--- build"
chainsaw="$("$here/chainsaw-build.sh")" || { echo "FAIL build: chainsaw (e2e/chainsaw-build.sh)"; exit 1; }
if [ -z "${CELER_BIN:-}" ]; then
  cargo build -p celer --locked --quiet || { echo "FAIL build: cargo build -p celer"; exit 1; }
  CELER_BIN="$repo/target/debug/celer"
fi
"$here/chainsaw-tests.py" plan "$chainsaw_dir" "$work/tests" "${folders[@]}" || { echo "FAIL plan"; exit 1; }

echo "--- control plane"
# With kube-controller-manager, as on a cluster Kyverno runs on: Namespaces are deleted after
# each test, the ClusterRoles tests label for Kyverno aggregated, their CSRs signed.
export CELER_E2E_CONTROLLER_MANAGER=1
# celer does the work of Kyverno's background controller (mutate-existing), whose service
# account some tests grant rights to directly (pods/resize): celer is that account here.
export CELER_E2E_WEBHOOK_USER=system:serviceaccount:kyverno:kyverno-background-controller
export CELER_E2E_WEBHOOK_GROUPS=system:serviceaccounts,system:serviceaccounts:kyverno
if ! "$here/control-plane.sh" up > "$work/env.sh"; then
  echo "FAIL control-plane: did not start (see above)"
  exit 1
fi
# shellcheck disable=SC1091
source "$work/env.sh"
"$CELER_BIN" crds --output json > "$work/crds.json" || { echo "FAIL celer crds"; exit 1; }
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
while IFS= read -r crd; do
  api POST "$crd_path" "$crd"
  [ "$status" = 201 ] || { echo "FAIL install CRD: HTTP $status: $(message | head -c 400)"; exit 1; }
done < <(jq -c '.items[]' "$work/crds.json")
established() {
  api GET "$crd_path/$1"
  [ "$status" = 200 ] && jq -e '.status.conditions[]? | select(.type == "Established" and .status == "True")' "$work/body.json" >/dev/null
}
for name in $(jq -r '.items[].metadata.name' "$work/crds.json"); do
  deadline=$(( $(date +%s) + 60 ))
  until established "$name"; do
    [ "$(date +%s)" -ge "$deadline" ] && { echo "FAIL CRD $name not Established in 60 s"; exit 1; }
    sleep 0.25
  done
done
if ! "$here/apply.py" "$here/manifests" "$here/chainsaw/rbac.yaml"; then
  echo "FAIL setup: manifests not applied"
  exit 1
fi


echo "--- celer"
# celer in Kyverno's place as Kyverno's tests see it: behind the Service kyverno/kyverno-svc
# (an EndpointSlice this script writes at this machine's address, as the endpoint controller
# would for a Pod; the API server calls it there), its Kyverno webhooks in Kyverno's own
# configurations. Without a routable address, by URL in celer's configurations (the tests
# that read Kyverno's webhook configurations then fail).
host_ip="$(ip -4 route get 192.0.2.1 2>/dev/null | sed -nE 's/.* src ([0-9.]+).*/\1/p' | sed -n 1p)"
case "$host_ip" in ""|127.*) host_ip="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | sed -n 1p)" ;; esac
kyverno_args=()
if [ -n "$host_ip" ]; then
  kyverno_args=(--webhook-service kyverno/kyverno-svc:443 --kyverno-webhook-configurations)
  export CELER_LISTEN_HOST=0.0.0.0
else
  echo "note: no non-loopback address here: celer is registered by URL"
fi
# The results of admission-only policies go from the webhook to the controller (a token both
# read; the controller's address is in its Lease).
head -c 24 /dev/urandom | base64 > "$work/admission-token"
if ! start_celer chainsaw --kubeconfig "$CELER_E2E_WEBHOOK_KUBECONFIG" --register-webhooks \
    --unregister-webhooks --policies-from-cluster "${kyverno_args[@]}" \
    --reports-user system:serviceaccount:kyverno:kyverno-reports-controller \
    --admission-reports-lease kyverno/celer-controller \
    --admission-reports-token-file "$work/admission-token"; then
  echo "FAIL celer: did not start (see $celer_log)"
  exit 1
fi
if [ -n "$host_ip" ]; then
  service="$(jq -cn '{apiVersion: "v1", kind: "Service", metadata: {name: "kyverno-svc", namespace: "kyverno"},
    spec: {ports: [{name: "https", port: 443, protocol: "TCP"}]}}')"
  slice="$(jq -cn --arg ip "$host_ip" --argjson port "$celer_port" '{apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice", metadata: {name: "kyverno-svc-celer", namespace: "kyverno",
      labels: {"kubernetes.io/service-name": "kyverno-svc"}},
    addressType: "IPv4", ports: [{name: "https", port: $port, protocol: "TCP"}],
    endpoints: [{addresses: [$ip], conditions: {ready: true}}]}')"
  api POST /api/v1/namespaces/kyverno/services "$service"
  [ "$status" = 201 ] || { echo "FAIL Service kyverno/kyverno-svc: HTTP $status: $(message | head -c 300)"; exit 1; }
  api POST /apis/discovery.k8s.io/v1/namespaces/kyverno/endpointslices "$slice"
  [ "$status" = 201 ] || { echo "FAIL EndpointSlice for kyverno-svc: HTTP $status: $(message | head -c 300)"; exit 1; }
  echo "celer is kyverno/kyverno-svc at $host_ip:$celer_port"
fi
# Kyverno's reports controller: `celer controller`, writing the report kind Kyverno writes by
# default (wgpolicyk8s.io; OpenReports for the openreports folder, as Kyverno's CI runs it
# with --openreportsEnabled), labelled as Kyverno labels them.
report_format=wgpolicy
for f in "${folders[@]}"; do [ "$f" = openreports ] && report_format=openreports; done
# It is also Kyverno's cleanup controller (DeletingPolicies), deleting only what that
# controller's service account may (the tests grant it per kind, or deliberately do not).
# And Kyverno's background controller (GeneratingPolicies), which may read the Secrets its
# policies clone (Kyverno's CI grants them). CELER_CONTROLLER_LOG: its log filter [info].
setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --policies-from-cluster \
  --deleting-user system:serviceaccount:kyverno:kyverno-cleanup-controller --context-allow-secrets \
  --report-format "$report_format" --report-managed-by kyverno --lease-namespace kyverno \
  --metrics-addr "127.0.0.1:$(free_port)" --admission-reports-token-file "$work/admission-token" \
  --log-level "${CELER_CONTROLLER_LOG:-info}" > "$work/controller.log" 2>&1 < /dev/null &
controller_pid=$!
disown "$controller_pid"
echo "celer serves on port $celer_port (log: $celer_log), set up in $(( $(date +%s) - started ))s"
echo "celer controller writes $report_format reports (log: $work/controller.log)"

echo "--- chainsaw $("$chainsaw" version 2>/dev/null | awk '/Version/ {print $2}') over ${folders[*]}"
t0=$(date +%s)
# The admin kubeconfig: the test runner is cluster-admin, as in Kyverno's own CI.
(cd "$work/tests" && exec "$chainsaw" test --no-color --test-dir . --kube-context celer-e2e \
  --parallel "${CELER_CHAINSAW_PARALLEL:-4}" \
  --assert-timeout "${CELER_CHAINSAW_ASSERT_TIMEOUT:-20s}" --error-timeout 10s \
  --apply-timeout 10s --delete-timeout 20s --cleanup-timeout 20s --exec-timeout 20s \
  --report-format JSON --report-path "$work" --report-name report) > "$work/chainsaw.log" 2>&1 &
chainsaw_pid=$!
wait "$chainsaw_pid"
chainsaw_pid=""
echo "chainsaw ran in $(( $(date +%s) - t0 ))s (log: $work/chainsaw.log, report: $work/report.json)"
"$here/chainsaw-tests.py" report "$work/tests/plan.json" "$work/report.json" | tee "$work/summary.txt"

passed="$(sed -nE 's/^chainsaw: ([0-9]+) passed.*/\1/p' "$work/summary.txt")"
[ -n "$passed" ] || { echo "FAIL report: no summary"; exit 1; }
if [ -n "$ratchet_line" ]; then
  ratchet="$(awk -v k="$ratchet_line" '$1 == k {print $2}' "$here/chainsaw.ratchet")"
  if [ -z "$ratchet" ]; then
    echo "note: no '$ratchet_line' line in e2e/chainsaw.ratchet ($passed passed)"
  elif [ "$passed" -lt "$ratchet" ]; then
    echo "FAIL ratchet: $passed passed, fewer than the $ratchet of e2e/chainsaw.ratchet ($ratchet_line)"
    exit 1
  else
    [ "$passed" -gt "$ratchet" ] && echo "note: $passed passed, more than the $ratchet of e2e/chainsaw.ratchet ($ratchet_line): raise it"
    echo "PASS ratchet: $passed passed (e2e/chainsaw.ratchet $ratchet_line: $ratchet)"
  fi
fi
echo "chainsaw.sh took $(( $(date +%s) - started ))s"
