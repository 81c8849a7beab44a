#!/usr/bin/env bash
# `celer controller` end to end: background scans and policy reports on a real kube-apiserver
# with kube-controller-manager (garbage collection, namespace deletion), two replicas.
#
#   e2e/controller.sh
#
# Environment: CELER_BIN (default: target/debug/celer, built if missing); the control plane's
# settings (CELER_E2E_APISERVER_PORT, CELER_E2E_ETCD_PORT, CELER_E2E_DIR) as
# e2e/control-plane.sh reads them; CELER_E2E_WORK, scratch [target/e2e/controller].
#
# Checks:
#   C1 Deployments created before the policies get an OpenReports Report each: the native
#      ValidatingAdmissionPolicy's failure (an Audit binding: reported, not enforced) and pass
#   C2 one controller leads (the Lease names it); the other waits
#   C3 an update changes the report (the failing Deployment scaled down passes)
#   C4 a deleted Deployment's report is removed
#   C5 a new policy for another kind lists that kind only: ConfigMaps get reports, the
#      Deployments are not listed again
#   C6 Gatekeeper: a Constraint's status holds its violations (totalViolations, violations,
#      auditTimestamp), as Gatekeeper's audit writes them
#   C7 rescans of unchanged objects write nothing (a 3 s rescan interval, writes counted)
#   C8 the leader killed: the other takes over within the lease duration, writes no report
#      again for unchanged objects, and every report is still there, none twice
#   C9 a deleted Namespace takes its objects' reports with it
#   C10 `celer scan --kubeconfig` (read only) finds what the controller reported
#   C11 a policy that runs at admission only (`background: false`): celer serve hands the
#      leader (b, after C8) the results of an admitted request, and the ConfigMap's report
#      holds them (process: admission review) beside its scan's
#   C12 a DeletingPolicy (made at the start, due on the next minute): the ConfigMaps its
#      objectSelector picks and whose condition holds are deleted; one whose condition is
#      false, one without the label and one in kube-system (left out of scans) stay; its
#      status.lastExecutionTime is written, an Event says what it deleted, and the leader
#      has the policy loaded (celer_deleting_policies)
#   C13 a GeneratingPolicy (generateExisting, synchronize) makes a ConfigMap in each labelled
#      Namespace, the one made before it too, labelled as Kyverno labels downstream objects,
#      and says so in the Namespace's ClusterReport (generated-resources);
#      the ConfigMap deleted by hand comes back; the trigger's label changed updates it; a
#      Namespace that stops matching loses it; the policy deleted takes the rest
#   C14 a synchronized clone (resource.Get of a ConfigMap into each labelled Namespace)
#      follows its source: changed, the clone changes; deleted, the clone goes
#   C15 a GeneratingPolicy triggered by DELETE (which no watch sees): celer serve registers
#      Kyverno's gpol webhook and hands the request to the leader, which generates with the
#      request's oldObject and userInfo; celer's own user's deletion triggers nothing
#      (skipBackgroundRequests)
#   C16 a GeneratingPolicy that fails (an object without a name): a Warning Event on the
#      policy naming the trigger, and an error result in the trigger's report
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/controller}"
rm -rf "$work" && mkdir -p "$work"
CELER_BIN="${CELER_BIN:-$repo/target/debug/celer}"
[ -x "$CELER_BIN" ] || (cd "$repo" && cargo build -p celer)
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

pids=()
cleanup() {
  local p
  stop_celer KILL
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

export CELER_E2E_CONTROLLER_MANAGER=1
env_lines="$("$here/control-plane.sh" up)" || { echo "FAIL control-plane: did not start (see above)"; exit 1; }
eval "$env_lines"

"$CELER_BIN" crds --output json > "$work/crds.json"
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
while IFS= read -r crd; do
  api POST "$crd_path" "$crd"
  [ "$status" = 201 ] || { echo "FAIL install CRD: HTTP $status: $(message | head -c 300)"; exit 1; }
done < <(jq -c '.items[]' "$work/crds.json")
for name in reports.openreports.io constrainttemplates.templates.gatekeeper.sh; do
  for _ in $(seq 1 100); do
    api GET "$crd_path/$name"
    [ "$(jq -r '.status.conditions[]? | select(.type=="Established") | .status' "$work/body.json")" = True ] && break
    sleep 0.2
  done
done

mkdir -p "$work/policies"
post() { # post PATH JSON: expects 201; policies are kept in $work/policies for celer scan
  case "$1" in
    */validatingadmissionpolic*|*/validatingpolicies|*/constrainttemplates|/apis/constraints.gatekeeper.sh/*)
      printf '%s\n' "$2" > "$work/policies/$(date +%s%N).json" ;;
  esac
  api POST "$1" "$2"
  [ "$status" = 201 ] || { echo "FAIL create $1: HTTP $status: $(message | head -c 300)"; exit 1; }
}
deployment() { # deployment NAMESPACE NAME REPLICAS
  printf '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"%s","namespace":"%s"},"spec":{"replicas":%s,"selector":{"matchLabels":{"app":"%s"}},"template":{"metadata":{"labels":{"app":"%s"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}' "$2" "$1" "$3" "$2" "$2"
}
for ns in staging other; do
  post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\",\"labels\":{\"environment\":\"$ns\"}}}"
done
post /apis/apps/v1/namespaces/staging/deployments "$(deployment staging big 7)"
post /apis/apps/v1/namespaces/staging/deployments "$(deployment staging small 2)"
post /apis/apps/v1/namespaces/other/deployments "$(deployment other huge 9)"
post /apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies \
  '{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"max-replicas"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["deployments"]}]},"validations":[{"expression":"object.spec.replicas <= 5"}]}}'
post /apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings \
  '{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"max-replicas-audit"},"spec":{"policyName":"max-replicas","validationActions":["Audit"],"matchResources":{"namespaceSelector":{"matchLabels":{"environment":"staging"}}}}}'

# C12's objects and policy, made first: the policy is due on the next minute, while the other
# checks run.
configmap() { # configmap NAMESPACE NAME STATE LABELLED
  local labels='{}'
  [ "$4" = yes ] && labels='{"expire":"true"}'
  printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","namespace":"%s","labels":%s},"data":{"state":"%s"}}' "$2" "$1" "$labels" "$3"
}
post /api/v1/namespaces/other/configmaps "$(configmap other job-done done yes)"
post /api/v1/namespaces/other/configmaps "$(configmap other job-running running yes)"
post /api/v1/namespaces/other/configmaps "$(configmap other job-unlabelled done no)"
post /api/v1/namespaces/kube-system/configmaps "$(configmap kube-system job-system done yes)"
post /apis/policies.kyverno.io/v1beta1/deletingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"DeletingPolicy","metadata":{"name":"expired-jobs"},"spec":{"schedule":"*/1 * * * *","matchConstraints":{"objectSelector":{"matchLabels":{"expire":"true"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]},"variables":[{"name":"state","expression":"object.data.?state.orValue(\"\")"}],"conditions":[{"name":"done","expression":"variables.state == \"done\""}]}}'

# start_controller NAME: a replica with its own metrics port; sets $metrics_NAME.
start_controller() {
  local name="$1" port
  port="$(free_port)"
  eval "metrics_$name=$port"
  setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --policies-from-cluster \
    --identity "$name" --lease-namespace default --lease-duration 6s --lease-retry 1s \
    --rescan-interval 3s --audit-status-interval 1s --report-writes-per-second 200 \
    --metrics-addr "127.0.0.1:$port" --log-level info \
    --admission-reports-token-file "$work/token" \
    > "$work/controller-$name.log" 2>&1 < /dev/null &
  pids+=($!)
  eval "pid_$name=$!"
  # Not a job of this shell: killing it (C8) is not reported.
  disown "$!"
}
metric() { # metric PORT NAME_WITH_LABELS: the value, 0 when absent
  curl -fsS "http://127.0.0.1:$1/metrics" 2>/dev/null | awk -v m="$2" '$1 == m { print $2; found=1 } END { if (!found) print 0 }'
}
reports() { # reports NAMESPACE: the Reports as JSON
  api GET "/apis/openreports.io/v1alpha1/namespaces/$1/reports"
  cp "$work/body.json" "$work/reports.json"
}
report_of() { # report_of NAMESPACE NAME: "result message" of the report whose scope names NAME
  reports "$1"
  jq -r --arg n "$2" '.items[] | select(.scope.name == $n) | .results[] | "\(.result) \(.message // "")"' "$work/reports.json"
}
wait_for() { # wait_for SECONDS COMMAND...: until the command succeeds
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.3
  done
}

head -c 24 /dev/urandom | base64 > "$work/token"
start_controller a
sleep 1
start_controller b

big_fails() { [ "$(report_of staging big)" = "fail failed expression: object.spec.replicas <= 5" ]; }
small_passes() { [ "$(report_of staging small)" = "pass " ]; }
if wait_for 30 big_fails && small_passes; then
  reports other
  if [ "$(jq '.items | length' "$work/reports.json")" = 0 ]; then
    ok "C1 Deployments made before the policy get reports (Audit binding: failure reported)"
  else bad "C1 Deployments made before the policy get reports" "the unbound namespace has reports: $(jq -c '.items[].scope' "$work/reports.json")"; fi
else bad "C1 Deployments made before the policy get reports" "big: $(report_of staging big); small: $(report_of staging small)"; fi

api GET /apis/coordination.k8s.io/v1/namespaces/default/leases/celer-controller
holder="$(jq -r '.spec.holderIdentity // empty' "$work/body.json")"
leaders=0
[ "$(metric "$metrics_a" celer_controller_leader)" = 1 ] && leaders=$((leaders + 1))
[ "$(metric "$metrics_b" celer_controller_leader)" = 1 ] && leaders=$((leaders + 1))
if [ "$holder" = a ] && [ "$leaders" = 1 ]; then ok "C2 one replica leads (Lease held by a), the other waits"
else bad "C2 one replica leads" "holder '$holder', replicas leading: $leaders"; fi

api PATCH /apis/apps/v1/namespaces/staging/deployments/big '{"spec":{"replicas":3}}'
big_passes() { [ "$(report_of staging big)" = "pass " ]; }
if wait_for 15 big_passes; then ok "C3 an update changes the report"
else bad "C3 an update changes the report" "big: $(report_of staging big)"; fi

api DELETE /apis/apps/v1/namespaces/staging/deployments/small
small_gone() { [ -z "$(report_of staging small)" ]; }
if wait_for 15 small_gone; then ok "C4 a deleted Deployment's report is removed"
else bad "C4 a deleted Deployment's report is removed" "small: $(report_of staging small)"; fi

deploy_scans="$(metric "$metrics_a" 'celer_scan_full_total{resource="deployments.apps"}')"
post /api/v1/namespaces/staging/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"staging"},"data":{"mode":"debug"}}'
post /apis/policies.kyverno.io/v1/validatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"no-debug"},"spec":{"validationActions":["Audit"],"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"]}]},"validations":[{"expression":"!has(object.data) || !(\"mode\" in object.data) || object.data.mode != \"debug\"","message":"no debug mode"}]}}'
cm_fails() { [ "$(report_of staging settings)" = "fail no debug mode" ]; }
if wait_for 20 cm_fails; then
  # The rescan period (3 s) lists Deployments again on its own: compare with a margin of
  # the periods that passed, and check the ConfigMaps' listing started after the policy.
  cm_scans="$(metric "$metrics_a" 'celer_scan_full_total{resource="configmaps"}')"
  if [ "${cm_scans%.*}" -ge 1 ] && grep -q "policies changed: listing the resources they may apply to" "$work/controller-a.log" \
      && ! grep -q "policies changed: listing every scanned resource again" "$work/controller-a.log"; then
    ok "C5 a policy for another kind lists that kind only (ConfigMap reported; Deployments not relisted for it)"
  else bad "C5 a policy for another kind lists that kind only" "configmaps listed $cm_scans times; deployments $deploy_scans before; log: $(grep -c 'listing every scanned' "$work/controller-a.log")"; fi
else bad "C5 a policy for another kind lists that kind only" "settings: $(report_of staging settings)"; fi

post /apis/templates.gatekeeper.sh/v1/constrainttemplates \
  '{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"k8smaxreplicas"},"spec":{"crd":{"spec":{"names":{"kind":"K8sMaxReplicas"}}},"targets":[{"target":"admission.k8s.gatekeeper.sh","code":[{"engine":"K8sNativeValidation","source":{"validations":[{"expression":"variables.anyObject.spec.replicas <= variables.params.max","messageExpression":"\"too many replicas: \" + string(variables.anyObject.spec.replicas)"}]}}]}]}}'
# The Constraint kind exists once a serving celer (or Gatekeeper) made its CRD; here the test
# makes it as Gatekeeper would, from `celer crds`' schema for Constraints.
post "$crd_path" '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"k8smaxreplicas.constraints.gatekeeper.sh"},"spec":{"group":"constraints.gatekeeper.sh","names":{"kind":"K8sMaxReplicas","plural":"k8smaxreplicas","singular":"k8smaxreplicas","listKind":"K8sMaxReplicasList"},"scope":"Cluster","versions":[{"name":"v1beta1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}'
for _ in $(seq 1 100); do
  api GET "$crd_path/k8smaxreplicas.constraints.gatekeeper.sh"
  [ "$(jq -r '.status.conditions[]? | select(.type=="Established") | .status' "$work/body.json")" = True ] && break
  sleep 0.2
done
post /apis/constraints.gatekeeper.sh/v1beta1/k8smaxreplicas \
  '{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sMaxReplicas","metadata":{"name":"at-most-four"},"spec":{"enforcementAction":"dryrun","match":{"kinds":[{"apiGroups":["apps"],"kinds":["Deployment"]}]},"parameters":{"max":4}}}'
constraint_status() {
  api GET /apis/constraints.gatekeeper.sh/v1beta1/k8smaxreplicas/at-most-four
  [ "$(jq -r '.status.totalViolations // empty' "$work/body.json")" = 1 ] \
    && [ "$(jq -r '.status.violations[0].name' "$work/body.json")" = huge ] \
    && [ "$(jq -r '.status.violations[0].enforcementAction' "$work/body.json")" = dryrun ] \
    && [ "$(jq -r '.status.violations[0].message' "$work/body.json")" = "too many replicas: 9" ] \
    && [ -n "$(jq -r '.status.auditTimestamp // empty' "$work/body.json")" ]
}
if wait_for 30 constraint_status; then ok "C6 a Constraint's status holds its violations, as Gatekeeper's audit writes them"
else bad "C6 a Constraint's status holds its violations" "$(jq -c '.status' "$work/body.json")"; fi

# Let writes settle, then count across rescans (every 3 s).
sleep 4
writes_before="$(metric "$metrics_a" 'celer_report_writes_total{operation="apply"}')"
scans_before="$(metric "$metrics_a" 'celer_scan_full_total{resource="deployments.apps"}')"
sleep 8
writes_after="$(metric "$metrics_a" 'celer_report_writes_total{operation="apply"}')"
scans_after="$(metric "$metrics_a" 'celer_scan_full_total{resource="deployments.apps"}')"
if [ "${scans_after%.*}" -ge $(( ${scans_before%.*} + 2 )) ] && [ "$writes_after" = "$writes_before" ]; then
  ok "C7 rescans of unchanged objects write nothing ($(( ${scans_after%.*} - ${scans_before%.*} )) rescans, $writes_after writes before and after)"
else bad "C7 rescans of unchanged objects write nothing" "Deployments listed $scans_before -> $scans_after, writes $writes_before -> $writes_after"; fi

# Reports of namespace `other` left out: C12's DeletingPolicy may delete one of its
# ConfigMaps (and so its report) while C8 runs.
count_reports() {
  api GET /apis/openreports.io/v1alpha1/reports
  jq '[.items[] | select(.metadata.namespace != "other")] | length' "$work/body.json"
}
before_count="$(count_reports)"
kill -KILL "$pid_a"
killed_at=$(date +%s)
b_leads() { [ "$(metric "$metrics_b" celer_controller_leader)" = 1 ] && [ "$(metric "$metrics_b" celer_controller_synced)" = 1 ]; }
if wait_for 30 b_leads; then
  took=$(( $(date +%s) - killed_at ))
  sleep 2
  b_writes="$(metric "$metrics_b" 'celer_report_writes_total{operation="apply"}')"
  after_count="$(count_reports)"
  names="$(jq -r '[.items[].metadata.name] | length' "$work/body.json") $(jq -r '[.items[].metadata.name] | unique | length' "$work/body.json")"
  if [ "$took" -le 15 ] && [ "$b_writes" = 0 ] && [ "$after_count" = "$before_count" ] && [ "${names% *}" = "${names#* }" ]; then
    ok "C8 the leader killed: b took over in ${took}s, wrote nothing again, $after_count reports kept, none twice"
  else bad "C8 the leader killed: b takes over" "took ${took}s, b wrote $b_writes, reports $before_count -> $after_count, names (all unique) $names"; fi
else bad "C8 the leader killed: b takes over" "b not leading and synced after 30 s: $(tail -n 5 "$work/controller-b.log")"; fi

start_celer admission --kubeconfig "$KUBECONFIG" --register-webhooks --unregister-webhooks \
  --policies-from-cluster --admission-reports-lease default/celer-controller \
  --admission-reports-token-file "$work/token" || { echo "FAIL celer serve did not start"; exit 1; }
post /apis/kyverno.io/v1/clusterpolicies \
  '{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"require-owner"},"spec":{"background":false,"rules":[{"name":"check-owner","match":{"any":[{"resources":{"kinds":["ConfigMap"],"namespaces":["staging"]}}]},"validate":{"failureAction":"Audit","message":"the label owner is required","pattern":{"metadata":{"labels":{"owner":"?*"}}}}}]}}'
# Served once celer has loaded it: its status (celer writes it) says ready.
policy_ready() {
  api GET /apis/kyverno.io/v1/clusterpolicies/require-owner
  jq -e '.status.ready == true or ([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length > 0)' "$work/body.json" >/dev/null
}
wait_for 30 policy_ready || echo "note: require-owner not ready after 30 s: $(jq -c .status "$work/body.json")"
post /api/v1/namespaces/staging/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unowned","namespace":"staging"},"data":{"mode":"prod"}}'
admission_reported() {
  report_of staging unowned > "$work/unowned.txt"
  grep -q "^fail validation error: the label owner is required" "$work/unowned.txt" && grep -q "^pass" "$work/unowned.txt"
}
if wait_for 20 admission_reported; then
  process="$(jq -r '.items[] | select(.scope.name == "unowned") | .results[] | select(.policy == "require-owner") | .properties.process' "$work/reports.json")"
  if [ "$process" = "admission review" ]; then ok "C11 an admission-only policy's result reaches the report through the leader (beside the scan's)"
  else bad "C11 an admission-only policy's result reaches the report" "process '$process'"; fi
else bad "C11 an admission-only policy's result reaches the report" "unowned: $(cat "$work/unowned.txt"); serve: $(curl -s --cacert "$work/tls-admission/ca.crt" "https://127.0.0.1:$celer_port/metrics" | grep admission_reports)"; fi

# C15: a GeneratingPolicy whose trigger is a deletion, which only admission sees.
post /apis/policies.kyverno.io/v1beta1/generatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"GeneratingPolicy","metadata":{"name":"tombstones"},"spec":{"matchConstraints":{"objectSelector":{"matchLabels":{"tombstone":"yes"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["DELETE"],"resources":["configmaps"]}]},"generate":[{"expression":"generator.Apply(oldObject.metadata.namespace, [{\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"ConfigMap\"), \"metadata\": dyn({\"name\": \"tombstone-\" + oldObject.metadata.name}), \"data\": dyn({\"deleted-by\": request.userInfo.username})}])"}]}}'
post /api/v1/namespaces/staging/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"leaving","namespace":"staging","labels":{"tombstone":"yes"}}}'
post /api/v1/namespaces/staging/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"quiet","namespace":"staging","labels":{"tombstone":"yes"}}}'
gpol_hook() {
  api GET /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations
  jq -e '[.items[].webhooks[]? | select(.name == "gpol.validate.kyverno.svc-ignore") | select(.rules[0].operations | index("DELETE"))] | length > 0' "$work/body.json" >/dev/null
}
tombstone() { api GET "/api/v1/namespaces/staging/configmaps/tombstone-$1"; [ "$status" = 200 ] && jq -r '.data["deleted-by"]' "$work/body.json"; }
tombstone_made() { [ -n "$(tombstone leaving)" ]; }
if wait_for 30 gpol_hook; then
  # The API server's webhook cache follows the configuration within a moment.
  sleep 3
  # celer's own user (the admin here) is a background user: its deletion triggers nothing
  # (skipBackgroundRequests); another user's does.
  api DELETE /api/v1/namespaces/staging/configmaps/quiet
  curl -sS -o /dev/null --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    -H "Impersonate-User: jane" -H "Impersonate-Group: system:masters" \
    -X DELETE "$CELER_E2E_SERVER/api/v1/namespaces/staging/configmaps/leaving"
  if wait_for 30 tombstone_made && [ "$(tombstone leaving)" = jane ] && [ -z "$(tombstone quiet)" ]; then
    ok "C15 a deletion triggers a GeneratingPolicy: celer serve handed it to the leader, which generated with the requester (jane); celer's own deletion triggered nothing"
  else bad "C15 a deletion triggers a GeneratingPolicy through the webhook" "no tombstone: serve $(curl -s --cacert "$work/tls-admission/ca.crt" "https://127.0.0.1:$celer_port/metrics" | grep generate_hand_offs | tr '\n' ' '); $(grep -ih "generat" "$work"/controller-*.log | tail -n 3)"; fi
else bad "C15 a deletion triggers a GeneratingPolicy through the webhook" "the gpol webhook was not registered: $(jq -c '[.items[].webhooks[]?.name]' "$work/body.json")"; fi
stop_celer TERM

scan_status=0
"$CELER_BIN" scan --kubeconfig "$KUBECONFIG" --policy "$work/policies" -o json > "$work/scan.json" 2> "$work/scan.err" || scan_status=$?
cm_scan="$(jq -r '.resources[] | select(.resource.name == "settings") | .results[] | "\(.result) \(.message)"' "$work/scan.json" 2>/dev/null)"
huge_scan="$(jq -r '.resources[] | select(.resource.name == "huge") | .violations[] | .message' "$work/scan.json" 2>/dev/null)"
if [ "$scan_status" = 0 ] && [ "$cm_scan" = "fail no debug mode" ] && [ "$huge_scan" = "too many replicas: 9" ]; then
  ok "C10 celer scan --kubeconfig finds what the controller reported (audit-only: exit 0)"
else bad "C10 celer scan --kubeconfig finds what the controller reported" "exit $scan_status, settings '$cm_scan', huge '$huge_scan': $(head -c 300 "$work/scan.err")"; fi

api DELETE /api/v1/namespaces/staging
staging_empty() { reports staging; [ "$(jq '.items | length' "$work/reports.json")" = 0 ]; }
if wait_for 60 staging_empty; then ok "C9 a deleted Namespace takes its reports with it"
else bad "C9 a deleted Namespace takes its reports with it" "$(jq -c '[.items[].scope.name]' "$work/reports.json")"; fi

exists() { api GET "/api/v1/namespaces/$1/configmaps/$2"; [ "$status" = 200 ]; }
job_deleted() { ! exists other job-done; }
if wait_for 90 job_deleted; then
  kept=""
  for cm in other/job-running other/job-unlabelled kube-system/job-system; do
    exists "${cm%/*}" "${cm#*/}" || kept="$kept $cm gone;"
  done
  api GET /apis/policies.kyverno.io/v1beta1/deletingpolicies/expired-jobs
  last_run="$(jq -r '.status.lastExecutionTime // empty' "$work/body.json")"
  api GET "/apis/events.k8s.io/v1/namespaces/default/events"
  event="$(jq -r '.items[] | select(.regarding.name == "expired-jobs") | .note' "$work/body.json" | head -n 1)"
  # The run may have been the first leader's, killed in C8 with its metrics: the current
  # leader shows the policy loaded; the Event tells the run.
  leader_port="$metrics_b"
  [ "$(metric "$metrics_a" celer_controller_leader)" = 1 ] && leader_port="$metrics_a"
  counted="$(metric "$leader_port" celer_deleting_policies)"
  if [ -z "$kept" ] && [ -n "$last_run" ] && [[ "$event" == "deleted 1 of 2 selected resources"* ]] && [ "$counted" = 1 ]; then
    ok "C12 a DeletingPolicy deleted the ConfigMap whose condition held, kept the others, wrote lastExecutionTime $last_run and an Event"
  else bad "C12 a DeletingPolicy deletes what its conditions select" "kept:${kept:- all}, lastExecutionTime '$last_run', event '$event', policies loaded '$counted'"; fi
else bad "C12 a DeletingPolicy deletes what its conditions select" "job-done still there after 90 s: $(grep -i deleting "$work"/controller-*.log | tail -n 5)"; fi

# C13: GeneratingPolicy.
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gen-old","labels":{"gen":"yes","team":"a"}}}'
sleep 1
post /apis/policies.kyverno.io/v1beta1/generatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"GeneratingPolicy","metadata":{"name":"ns-defaults"},"spec":{"evaluation":{"generateExisting":{"enabled":true},"synchronize":{"enabled":true}},"matchConstraints":{"objectSelector":{"matchLabels":{"gen":"yes"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["namespaces"]}]},"generate":[{"expression":"generator.Apply(object.metadata.name, [{\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"ConfigMap\"), \"metadata\": dyn({\"name\": \"defaults\"}), \"data\": dyn({\"team\": object.metadata.labels.team})}])"}]}}'
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gen-new","labels":{"gen":"yes","team":"a"}}}'
team_of() { api GET "/api/v1/namespaces/$1/configmaps/defaults"; [ "$status" = 200 ] && jq -r '.data.team' "$work/body.json"; }
both_made() { [ "$(team_of gen-old)" = a ] && [ "$(team_of gen-new)" = a ]; }
restored() { [ "$(team_of gen-new)" = a ]; }
updated() { [ "$(team_of gen-new)" = b ]; }
old_gone() { api GET /api/v1/namespaces/gen-old/configmaps/defaults; [ "$status" = 404 ]; }
new_gone() { api GET /api/v1/namespaces/gen-new/configmaps/defaults; [ "$status" = 404 ]; }
c13=""
if wait_for 30 both_made; then
  api GET /api/v1/namespaces/gen-new/configmaps/defaults
  labels="$(jq -c '.metadata.labels' "$work/body.json")"
  [ "$(jq -r '.["app.kubernetes.io/managed-by"] + " " + .["generate.kyverno.io/policy-name"] + " " + .["generate.kyverno.io/trigger-kind"]' <<<"$labels")" = "kyverno ns-defaults Namespace" ] \
    || c13="labels $labels"
  # The trigger's report holds the generation's result, as Kyverno reports it.
  generation_reported() {
    api GET /apis/openreports.io/v1alpha1/clusterreports
    [ "$(jq -r '.items[] | select(.scope.name == "gen-new") | .results[] | select(.policy == "ns-defaults") | "\(.result) \(.source) \(.properties["generated-resources"])"' "$work/body.json")" \
      = "pass KyvernoGeneratingPolicy /v1, Kind=ConfigMap Name=defaults Namespace=gen-new" ]
  }
  wait_for 30 generation_reported || c13="$c13; no generation result in gen-new's ClusterReport ($(jq -c '[.items[] | select(.scope.name == "gen-new") | .results]' "$work/body.json"))"
  api DELETE /api/v1/namespaces/gen-new/configmaps/defaults
  sleep 1
  wait_for 30 restored || c13="$c13; deleted ConfigMap not restored"
  api PATCH /api/v1/namespaces/gen-new '{"metadata":{"labels":{"team":"b"}}}'
  wait_for 30 updated || c13="$c13; not updated to team b ($(team_of gen-new))"
  api PATCH /api/v1/namespaces/gen-old '{"metadata":{"labels":{"gen":null}}}'
  wait_for 30 old_gone || c13="$c13; a Namespace that stopped matching kept its ConfigMap"
  api DELETE /apis/policies.kyverno.io/v1beta1/generatingpolicies/ns-defaults
  wait_for 60 new_gone || c13="$c13; the policy deleted, its ConfigMap stayed"
else c13="not generated: old '$(team_of gen-old)', new '$(team_of gen-new)'"; fi
if [ -z "$c13" ]; then ok "C13 a GeneratingPolicy generates (existing triggers too), restores, follows its trigger, and cleans up"
else bad "C13 a GeneratingPolicy generates, restores, follows its trigger, and cleans up" "$c13: $(grep -i generat "$work"/controller-*.log | grep -iv info | tail -n 3)"; fi

# C14: a clone follows its source.
post /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared-settings","namespace":"default"},"data":{"level":"1"}}'
post /apis/policies.kyverno.io/v1beta1/generatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"GeneratingPolicy","metadata":{"name":"clone-settings"},"spec":{"evaluation":{"synchronize":{"enabled":true}},"matchConstraints":{"objectSelector":{"matchLabels":{"clone":"yes"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["namespaces"]}]},"variables":[{"name":"source","expression":"resource.Get(\"v1\", \"configmaps\", \"default\", \"shared-settings\")"}],"generate":[{"expression":"generator.Apply(object.metadata.name, [variables.source])"}]}}'
sleep 2
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"clone-a","labels":{"clone":"yes"}}}'
level() { api GET /api/v1/namespaces/clone-a/configmaps/shared-settings; [ "$status" = 200 ] && jq -r '.data.level' "$work/body.json"; }
cloned() { [ "$(level)" = 1 ]; }
followed() { [ "$(level)" = 2 ]; }
clone_gone() { api GET /api/v1/namespaces/clone-a/configmaps/shared-settings; [ "$status" = 404 ]; }
c14=""
if wait_for 30 cloned; then
  api PATCH /api/v1/namespaces/default/configmaps/shared-settings '{"data":{"level":"2"}}'
  wait_for 30 followed || c14="the clone did not follow its source (level '$(level)')"
  api DELETE /api/v1/namespaces/default/configmaps/shared-settings
  wait_for 30 clone_gone || c14="$c14; the clone stayed after its source was deleted"
else c14="not cloned: '$(level)'"; fi
if [ -z "$c14" ]; then ok "C14 a synchronized clone follows its source (changed, deleted)"
else bad "C14 a synchronized clone follows its source" "$c14"; fi

# C16: a GeneratingPolicy that fails says so: a Warning Event on the policy naming the
# trigger, and an error result in the trigger's report.
post /apis/policies.kyverno.io/v1beta1/generatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"GeneratingPolicy","metadata":{"name":"nameless"},"spec":{"matchConstraints":{"objectSelector":{"matchLabels":{"nameless":"yes"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["namespaces"]}]},"generate":[{"expression":"generator.Apply(object.metadata.name, [{\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"ConfigMap\"), \"metadata\": dyn({\"labels\": dyn({\"a\": \"b\"})})}])"}]}}'
sleep 2
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"nameless-ns","labels":{"nameless":"yes"}}}'
failure_told() {
  api GET /apis/events.k8s.io/v1/namespaces/default/events
  jq -e '[.items[] | select(.regarding.name == "nameless" and .reason == "PolicyError" and .related.name == "nameless-ns")] | length > 0' "$work/body.json" >/dev/null
}
error_reported() {
  api GET /apis/openreports.io/v1alpha1/clusterreports
  [ "$(jq -r '.items[] | select(.scope.name == "nameless-ns") | .results[] | select(.policy == "nameless") | .result' "$work/body.json")" = error ]
}
if wait_for 30 failure_told && wait_for 30 error_reported; then
  ok "C16 a failing GeneratingPolicy says so: a Warning Event on the policy naming the trigger, an error in the trigger's report"
else bad "C16 a failing GeneratingPolicy says so" "events: $(jq -c '[.items[] | select(.regarding.name == "nameless") | {reason, note}]' "$work/body.json" 2>/dev/null | head -c 400)"; fi

echo "controller e2e: $pass passed, $fail failed"
[ "$fail" = 0 ] || { printf 'failed: %s\n' "${failed[@]}"; exit 1; }
