#!/usr/bin/env bash
# End-to-end tests: celer as the webhook of a real kube-apiserver (e2e/control-plane.sh), Pods
# and Deployments created through the API server. Each check prints PASS or FAIL with the
# reason; the summary line is `e2e: N passed, M failed`; the exit status is non-zero on any
# failure. The control plane and celer are always stopped at the end.
#
#   e2e/run.sh
#
# Environment: CELER_BIN (a celer binary; default: `cargo build -p celer`, target/debug/celer),
# CELER_E2E_KEEP=1 (leave the control plane running, for poking at it afterwards), and the
# settings of e2e/control-plane.sh.
#
# What is checked:
#   A. the embedded Pod Security default: registration (CA bundle, rules, failurePolicy,
#      sideEffects, versions), baseline denied, restricted warned, kube-system exempt,
#      Deployments warned, dry-run, removal on exit;
#   B. the bench contract (a MutatingAdmissionPolicy and a ValidatingAdmissionPolicy): the
#      annotation injected only when absent, the team annotation required, CREATE and UPDATE,
#      objectSelector and namespaceSelector, dry-run;
#   C. reads from the cluster: a namespaceSelector on a label only the cluster knows, the
#      label added while celer runs, a Namespace created a moment before the request,
#      namespaceObject, a ConfigMap param changed and deleted;
#   D. failurePolicy while celer is down: Fail refuses, Ignore admits, unmatched resources
#      never reach it;
#   E. policies as cluster objects (--policies-from-cluster, --policy-configmaps) and no
#      policy file: a labelled ConfigMap's policy enforced, changed and removed as the
#      ConfigMap is, a broken one left out and logged while the others serve, one in another
#      namespace than --policy-configmaps-namespace not served;
#   F. two replicas on the same policies: both serve, and they register the same webhook
#      configuration without fighting over it;
#   G. the time from a policy's apply and delete to its enforcement and its end (printed);
#   H. Kyverno's ValidatingPolicy as a cluster object (celer's own CRDs): enforced, its
#      status written as Kyverno writes it, a broken one not ready and saying why, removal;
#   I. Gatekeeper's ConstraintTemplate as a cluster object: its Constraint kind made (and
#      removed with it), a Constraint enforced, both statuses written.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/run}"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

https_pid=""
registry_pid=""
cleanup() {
  [ -n "$https_pid" ] && kill "$https_pid" 2>/dev/null
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null
  stop_celer TERM
  if [ "${CELER_E2E_KEEP:-}" != 1 ]; then
    "$here/control-plane.sh" down
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

last() { echo "HTTP $status: $(message | head -c 400)"; }

# expect NAME CODE [TEXT]: the last answer had status CODE and its message contains TEXT.
expect() {
  if [ "$status" = "$2" ] && { [ $# -lt 3 ] || message | grep -qF -- "$3"; }; then
    ok "$1"
  else
    bad "$1" "want HTTP $2${3:+ with \"$3\"}, got $(last)"
  fi
}

# check NAME REASON COMMAND...: passes when COMMAND succeeds; REASON says what failed.
check() {
  local name="$1" reason="$2"; shift 2
  if "$@" >/dev/null; then ok "$name"; else bad "$name" "$reason"; fi
}

# eventually SECONDS COMMAND...: retries COMMAND (which calls the API) until it succeeds.
eventually() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.25
  done
}


started=$(date +%s)
echo "--- build"
if [ -z "${CELER_BIN:-}" ]; then
  cargo build -p celer --locked --quiet || { echo "FAIL build: cargo build -p celer"; exit 1; }
  CELER_BIN="$repo/target/debug/celer"
fi
echo "--- control plane"
if ! "$here/control-plane.sh" up > "$work/env.sh"; then
  echo "FAIL control-plane: did not start (see above)"
  exit 1
fi
# shellcheck disable=SC1091
source "$work/env.sh"
if ! "$here/apply.py" "$here/manifests"; then
  echo "FAIL setup: manifests not applied"
  exit 1
fi
contract="$repo/policies/bench-contract"
[ -d "$contract" ] || contract="$here/policies/bench-contract.yaml"
webhook_user=(--kubeconfig "$CELER_E2E_WEBHOOK_KUBECONFIG")
# Third-party fixtures (section I reads a gatekeeper-library template) come from here.
corpus="${CELER_CORPUS:-$repo/../shared/corpus}"

# ---------------------------------------------------------------------------------------
echo "--- A. the Pod Security default"
if start_celer pss "${webhook_user[@]}" --register-webhooks --unregister-webhooks --webhook-timeout 5; then
  ok "A0 celer serves with the webhook user's RBAC and registers"
else
  bad "A0 celer serves with the webhook user's RBAC and registers" "see $celer_log"
fi
api GET "$(webhooks validating)"
cp "$work/body.json" "$work/vwc.json"
ca="$(base64 -w0 < "$work/tls-pss/ca.crt")"
check "A1 ValidatingWebhookConfiguration: url, CA bundle, failurePolicy, sideEffects, versions, timeout, kube-system left alone" \
  "got $(jq -c '.webhooks[0] | del(.rules, .clientConfig.caBundle)' "$work/vwc.json" 2>/dev/null || last)" \
  jq -e --arg url "https://127.0.0.1:$celer_port/validate/shared" --arg ca "$ca" '
    .webhooks | length == 1 and (.[0] | .clientConfig.url == $url and .clientConfig.caBundle == $ca
      and .failurePolicy == "Fail" and .sideEffects == "None" and .timeoutSeconds == 5
      and .admissionReviewVersions == ["v1"] and .matchPolicy == "Equivalent"
      and .namespaceSelector.matchExpressions == [{key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system"]}])' "$work/vwc.json"
check "A2 rules name only what the Pod Security policies match (Pod-bearing kinds, CREATE and UPDATE)" \
  "got $(jq -c '[.webhooks[0].rules[] | {apiGroups, resources, operations}]' "$work/vwc.json" 2>/dev/null)" \
  jq -e '[.webhooks[0].rules[]] as $r
    | ([$r[].resources[]] | index("pods") != null and index("deployments") != null
        and index("configmaps") == null and index("*") == null)
      and ([$r[].operations[]] | unique == ["CREATE", "UPDATE"])' "$work/vwc.json"
api GET "$(webhooks mutating)"
expect "A3 no MutatingWebhookConfiguration without mutating policies" 404

probe_denied() { api POST "$(pods default)?dryRun=All" "$(pod probe privileged)"; [ "$status" = 403 ]; }
eventually 10 probe_denied || true
api POST "$(pods default)" "$(pod priv privileged)"
expect "A4 a privileged Pod is denied (baseline)" 403 'violates PodSecurity "baseline:latest": privileged'
api POST "$(pods default)" "$(pod plain plain)"
check "A5 a baseline Pod is admitted with the restricted warnings" "$(last); warnings: $(warnings | head -c 300)" \
  bash -c '[ "$1" = 201 ] && grep -q "restricted:latest" <<<"$2"' _ "$status" "$(warnings)"
api POST "$(pods default)" "$(pod good restricted)"
check "A6 a restricted Pod is admitted without warnings" "$(last); warnings: $(warnings | head -c 300)" \
  bash -c '[ "$1" = 201 ] && [ -z "$2" ]' _ "$status" "$(warnings)"
api POST "$(pods kube-system)" "$(pod priv privileged)"
expect "A7 kube-system is exempt" 201
api POST "$(deployments default)" "$(deployment web 1 privileged)"
check "A8 a Deployment with a privileged template is admitted with a warning" "$(last); warnings: $(warnings | head -c 300)" \
  bash -c '[ "$1" = 201 ] && grep -q "privileged" <<<"$2"' _ "$status" "$(warnings)"
api POST "$(pods default)?dryRun=All" "$(pod dry-priv privileged)"
expect "A9 dry-run: a privileged Pod is denied" 403 "privileged"
api POST "$(pods default)?dryRun=All" "$(pod dry-good restricted)"
dry_status=$status
api GET "$(pods default dry-good)"
check "A10 dry-run: a restricted Pod is admitted and not stored" "dry-run HTTP $dry_status, then GET HTTP $status" \
  bash -c '[ "$1" = 201 ] && [ "$2" = 404 ]' _ "$dry_status" "$status"
stop_celer TERM
api GET "$(webhooks validating)"
expect "A11 --unregister-webhooks removes the configuration on exit" 404

# ---------------------------------------------------------------------------------------
echo "--- B. the bench contract, C. reads from the cluster"
subject='{"policy-bench-subject":"true"}'
team='{"policy-bench-team":"platform"}'
if start_celer contract "${webhook_user[@]}" --register-webhooks --policies "$contract" \
    --policies "$here/policies/cluster-reads.yaml"; then
  ok "B0 celer serves the contract and the cluster-reads policies and registers"
else
  bad "B0 celer serves the contract and the cluster-reads policies and registers" "see $celer_log"
fi
api GET "$(webhooks mutating)"
cp "$work/body.json" "$work/mwc.json"
check "B1 MutatingWebhookConfiguration: Pods CREATE and UPDATE, reinvocationPolicy Never" \
  "got $(jq -c '.webhooks[0] | {rules, reinvocationPolicy}' "$work/mwc.json" 2>/dev/null || last)" \
  jq -e '.webhooks[0] | .reinvocationPolicy == "Never" and .clientConfig.url != null
    and ([.rules[] | {apiGroups, resources, operations}]
         == [{apiGroups: [""], resources: ["pods"], operations: ["CREATE", "UPDATE"]}])' "$work/mwc.json"
api GET "$(webhooks validating)"
check "B2 ValidatingWebhookConfiguration: Pods and Deployments, CREATE and UPDATE" \
  "got $(jq -c '[.webhooks[0].rules[] | {apiGroups, resources, operations}]' "$work/body.json" 2>/dev/null || last)" \
  jq -e '[.webhooks[0].rules[] | {apiGroups, resources, operations}]
    == [{apiGroups: [""], resources: ["pods"], operations: ["CREATE", "UPDATE"]},
        {apiGroups: ["apps"], resources: ["deployments"], operations: ["CREATE", "UPDATE"]}]' "$work/body.json"

probe_mutated() {
  api POST "$(pods policy-bench)?dryRun=All" "$(pod probe restricted "$subject" "$team")"
  [ "$status" = 201 ] && [ "$(annotation policy-bench-injected)" = true ]
}
eventually 10 probe_mutated || true
api POST "$(pods policy-bench)" "$(pod ok restricted "$subject" "$team")"
check "B3 a compliant subject Pod is admitted with policy-bench-injected: \"true\"" \
  "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 201 ] && [ "$2" = true ]' _ "$status" "$(annotation policy-bench-injected)"
api POST "$(pods policy-bench)" "$(pod preset restricted "$subject" '{"policy-bench-team":"platform","policy-bench-injected":"no"}')"
check "B4 an injected annotation already there is kept" "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 201 ] && [ "$2" = no ]' _ "$status" "$(annotation policy-bench-injected)"
api POST "$(pods policy-bench)" "$(pod no-team restricted "$subject")"
expect "B5 a subject Pod without the team annotation is denied with the contract's message" 403 \
  "policy-bench-team annotation must equal platform"
api POST "$(pods policy-bench)" "$(pod other-team restricted "$subject" '{"policy-bench-team":"other"}')"
expect "B6 a subject Pod of another team is denied" 403 "policy-bench-team annotation must equal platform"
api POST "$(pods policy-bench)" "$(pod bystander restricted)"
check "B7 a Pod without the subject label is neither checked nor mutated (objectSelector)" \
  "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 201 ] && [ -z "$2" ]' _ "$status" "$(annotation policy-bench-injected)"
api POST "$(pods default)" "$(pod elsewhere restricted "$subject")"
check "B8 a subject Pod outside policy-bench is neither checked nor mutated (namespaceSelector)" \
  "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 201 ] && [ -z "$2" ]' _ "$status" "$(annotation policy-bench-injected)"
api PATCH "$(pods policy-bench ok)" '{"metadata":{"annotations":{"policy-bench-team":"other"}}}'
expect "B9 UPDATE: changing the team annotation is denied" 403 "policy-bench-team annotation must equal platform"
api PATCH "$(pods policy-bench bystander)" '{"metadata":{"labels":{"policy-bench-subject":"true"},"annotations":{"policy-bench-team":"platform"}}}'
check "B10 UPDATE: a Pod that becomes a subject gets the annotation" "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 200 ] && [ "$2" = true ]' _ "$status" "$(annotation policy-bench-injected)"
api POST "$(pods policy-bench)?dryRun=All" "$(pod dry restricted "$subject" "$team")"
dry_status=$status; dry_annotation="$(annotation policy-bench-injected)"
api GET "$(pods policy-bench dry)"
check "B11 dry-run: mutated in the answer, not stored" "dry-run HTTP $dry_status annotation '$dry_annotation', then GET HTTP $status" \
  bash -c '[ "$1" = 201 ] && [ "$2" = true ] && [ "$3" = 404 ]' _ "$dry_status" "$dry_annotation" "$status"
api POST "$(pods policy-bench)?dryRun=All" "$(pod dry-no-team restricted "$subject")"
expect "B12 dry-run: a non-compliant Pod is denied" 403 "policy-bench-team annotation must equal platform"

api POST "$(deployments e2e-capped)" "$(deployment big 5)"
# reason: Invalid is HTTP 422, as kube-apiserver answers for the same policy.
expect "C1 namespaceSelector and params from the cluster: 5 replicas over the cap of 3 are denied, namespaceObject in the message" \
  422 "team blue: 5 replicas, more than the cap of 3"
api POST "$(deployments e2e-capped)" "$(deployment small 2)"
expect "C2 2 replicas under the cap are admitted" 201
api POST "$(deployments e2e-free)" "$(deployment big 5)"
expect "C3 a namespace without the label is not capped" 201
api PATCH /api/v1/namespaces/e2e-free '{"metadata":{"labels":{"celer-e2e/capped":"true"}}}'
capped_free() { api POST "$(deployments e2e-free)?dryRun=All" "$(deployment bigger 6)"; [ "$status" = 422 ]; }
eventually 10 capped_free
expect "C4 a label added to a Namespace while celer runs is seen (watch)" 422 "team green: 6 replicas"
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"e2e-new","labels":{"celer-e2e/capped":"true","team":"red"}}}'
api POST "$(deployments e2e-new)" "$(deployment big 5)"
expect "C5 a Namespace created a moment before the request is found" 422 "team red: 5 replicas"
api PATCH /api/v1/namespaces/celer-e2e/configmaps/replica-cap '{"data":{"maxReplicas":"10"}}'
raised() { api POST "$(deployments e2e-capped)?dryRun=All" "$(deployment big 5)"; [ "$status" = 201 ]; }
eventually 10 raised
expect "C6 a changed param is seen: 5 replicas under the new cap of 10 are admitted" 201
api DELETE /api/v1/namespaces/celer-e2e/configmaps/replica-cap
missing() { api POST "$(deployments e2e-capped)?dryRun=All" "$(deployment small 2)"; [ "$status" = 422 ]; }
eventually 10 missing
expect "C7 a deleted param denies (parameterNotFoundAction: Deny)" 422 "no params found for policy binding"

# ---------------------------------------------------------------------------------------
echo "--- D. failurePolicy while celer is down"
stop_celer KILL
api POST "$(pods policy-bench)" "$(pod while-down restricted "$subject" "$team")"
expect "D1 failurePolicy Fail: with celer down, a matched Pod is refused" 500 "failed calling webhook"
api POST /api/v1/namespaces/policy-bench/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unmatched"}}'
expect "D2 resources no policy matches never reach the webhook (a ConfigMap is created)" 201
if start_celer ignore "${webhook_user[@]}" --register-webhooks --policies "$contract" \
    --webhook-failure-policy Ignore; then
  ok "D3 celer registers again with failurePolicy Ignore"
else
  bad "D3 celer registers again with failurePolicy Ignore" "see $celer_log"
fi
stop_celer KILL
ignored() { api POST "$(pods policy-bench)?dryRun=All" "$(pod ignored restricted "$subject")"; [ "$status" = 201 ]; }
eventually 10 ignored
check "D4 failurePolicy Ignore: with celer down, a Pod the contract would deny is admitted unmutated" \
  "$(last); annotation: $(annotation policy-bench-injected)" \
  bash -c '[ "$1" = 201 ] && [ -z "$2" ]' _ "$status" "$(annotation policy-bench-injected)"

# ---------------------------------------------------------------------------------------
echo "--- E. policies as cluster objects: ConfigMaps (watched), no policy files"
# fed_cm NAME MESSAGE: a ConfigMap (denials are 422, reason Invalid, as kube-apiserver answers) holding a ValidatingAdmissionPolicy and its binding that
# deny Pods named NAME in e2e-fed with MESSAGE.
fed_cm() {
  local policy
  policy="$(printf '%s\n' \
    "apiVersion: admissionregistration.k8s.io/v1" "kind: ValidatingAdmissionPolicy" \
    "metadata: {name: fed-$1}" "spec:" "  matchConstraints:" \
    "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: e2e-fed}}" \
    "    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]" \
    "  validations: [{expression: \"object.metadata.name != '$1'\", message: '$2'}]" \
    "---" \
    "apiVersion: admissionregistration.k8s.io/v1" "kind: ValidatingAdmissionPolicyBinding" \
    "metadata: {name: fed-$1}" "spec: {policyName: fed-$1, validationActions: [Deny]}")"
  jq -cn --arg name "fed-$1" --arg policy "$policy" \
    '{apiVersion: "v1", kind: "ConfigMap",
      metadata: {name: $name, namespace: "celer-e2e", labels: {"celer.dev/policies": "true"}},
      data: {"policy.yaml": $policy}}'
}
fed_denied() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" = 422 ] && message | grep -qF -- "$2"; }
fed_admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" = 201 ]; }
# ms_since START_NS: milliseconds since START_NS (date +%s%N).
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
if start_celer fed "${webhook_user[@]}" --register-webhooks --policies-from-cluster \
    --policy-configmaps celer.dev/policies=true; then
  ok "E0 celer starts with no policy file, serving the cluster's policy objects and labelled ConfigMaps"
else
  bad "E0 celer starts with no policy file, serving the cluster's policy objects and labelled ConfigMaps" "see $celer_log"
fi
t0=$(date +%s%N)
api POST /api/v1/namespaces/celer-e2e/configmaps "$(fed_cm blocked 'fed policy one')"
if eventually 10 fed_denied blocked "fed policy one"; then
  ok "E1 a policy ConfigMap created while celer runs is enforced (after $(ms_since "$t0") ms, registration included)"
else
  bad "E1 a policy ConfigMap created while celer runs is enforced" "$(last)"
fi
t0=$(date +%s%N)
api PUT /api/v1/namespaces/celer-e2e/configmaps/fed-blocked "$(fed_cm blocked 'fed policy changed')"
if eventually 10 fed_denied blocked "fed policy changed"; then
  ok "E2 a changed policy ConfigMap is enforced as changed (after $(ms_since "$t0") ms)"
else
  bad "E2 a changed policy ConfigMap is enforced as changed" "$(last)"
fi
api POST /api/v1/namespaces/celer-e2e/configmaps \
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fed-broken","namespace":"celer-e2e","labels":{"celer.dev/policies":"true"}},"data":{"policy.yaml":"kind: [unclosed"}}'
broken_logged() { grep -q 'policy left out.*configmap celer-e2e/fed-broken policy.yaml' "$celer_log"; }
if eventually 10 broken_logged && fed_denied blocked "fed policy changed"; then
  ok "E3 a broken policy ConfigMap is left out and logged by name; the others keep serving"
else
  bad "E3 a broken policy ConfigMap is left out and logged by name; the others keep serving" "$(last); log: $(grep -c 'left out' "$celer_log") lines"
fi
api POST /api/v1/namespaces/celer-e2e/configmaps \
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fed-unlabelled","namespace":"celer-e2e"},"data":{"policy.yaml":"kind: [unclosed"}}'
api POST "$(pods e2e-fed)?dryRun=All" "$(pod other restricted)"
expect "E4 a Pod no fed policy denies is admitted" 201
t0=$(date +%s%N)
api DELETE /api/v1/namespaces/celer-e2e/configmaps/fed-blocked
if eventually 10 fed_admitted blocked; then
  ok "E5 a deleted policy ConfigMap stops being enforced (after $(ms_since "$t0") ms)"
else
  bad "E5 a deleted policy ConfigMap stops being enforced" "$(last)"
fi
stop_celer TERM
# --policy-configmaps-namespace: a labelled ConfigMap elsewhere adds no policy (whoever may
# create ConfigMaps in some namespace must not add policies for the cluster).
if start_celer fedns "${webhook_user[@]}" --register-webhooks \
    --policy-configmaps celer.dev/policies=true --policy-configmaps-namespace celer-e2e; then
  api POST /api/v1/namespaces/e2e-fed/configmaps \
    "$(fed_cm outsider 'fed outsider' | jq -c '.metadata.namespace = "e2e-fed"')"
  api POST /api/v1/namespaces/celer-e2e/configmaps "$(fed_cm insider 'fed insider')"
  if eventually 10 fed_denied insider "fed insider" && fed_admitted outsider; then
    ok "E6 with --policy-configmaps-namespace, only that namespace's policy ConfigMaps are served"
  else
    bad "E6 with --policy-configmaps-namespace, only that namespace's policy ConfigMaps are served" "$(last)"
  fi
  stop_celer TERM
  api DELETE /api/v1/namespaces/e2e-fed/configmaps/fed-outsider
  api DELETE /api/v1/namespaces/celer-e2e/configmaps/fed-insider
else
  bad "E6 with --policy-configmaps-namespace, only that namespace's policy ConfigMaps are served" "see $celer_log"
fi

# ---------------------------------------------------------------------------------------
echo "--- F. two replicas serving the same cluster policies register without fighting"
# Both serve the same certificate and register the same URL and CA (as replicas behind one
# Service do), so they want the same configurations: one field manager, no flapping.
replica_args=("${webhook_user[@]}" --register-webhooks --policy-configmaps celer.dev/policies=true)
if start_celer replica-a "${replica_args[@]}"; then
  pid_a=$celer_pid; port_a=$celer_port
  mkdir -p "$work/tls-replica-b" && cp "$work/tls-replica-a/ca.crt" "$work/tls-replica-b/ca.crt"
  if start_celer replica-b "${replica_args[@]}" --tls-cert "$work/tls-replica-a/tls.crt" \
      --tls-key "$work/tls-replica-a/tls.key" --webhook-url "https://127.0.0.1:$port_a" \
      --webhook-ca-bundle "$work/tls-replica-a/ca.crt"; then
    pid_b=$celer_pid
    ok "F0 two replicas start"
  else
    pid_b=""
    bad "F0 two replicas start" "see $celer_log"
  fi
else
  pid_a=""; pid_b=""
  bad "F0 two replicas start" "see $celer_log"
fi
api POST /api/v1/namespaces/celer-e2e/configmaps "$(fed_cm replicated 'fed policy of two replicas')"
if eventually 10 fed_denied replicated "fed policy of two replicas"; then
  ok "F1 a policy ConfigMap is enforced with two replicas running"
else
  bad "F1 a policy ConfigMap is enforced with two replicas running" "$(last)"
fi
# Both have reloaded and registered; the configuration must now stay put.
sleep 2
api GET "$(webhooks validating)"
before="$(jq -r '.metadata.resourceVersion' "$work/body.json")"
managers="$(jq -r '[.metadata.managedFields[].manager] | unique | join(",")' "$work/body.json")"
sleep 3
api GET "$(webhooks validating)"
after="$(jq -r '.metadata.resourceVersion' "$work/body.json")"
check "F2 the two replicas agree on the webhook configuration: one field manager, unchanged over 3 s" \
  "managers $managers, resourceVersion $before then $after" \
  bash -c '[ "$1" = celer ] && [ "$2" = "$3" ]' _ "$managers" "$before" "$after"
for pid in $pid_a $pid_b; do celer_pid=$pid; stop_celer TERM; done
api DELETE /api/v1/namespaces/celer-e2e/configmaps/fed-replicated

# ---------------------------------------------------------------------------------------
echo "--- G. time from a policy's apply (and delete) to its enforcement (and its end)"
# CELER_E2E_APPLIES policies (default 20; docs/benchmarks.md gives the figures of 100), one at
# a time: created, polled with dry-run requests every 20 ms until denied, deleted, polled
# until admitted. The check asserts every one took effect within 10 s; the latencies are
# printed (targets are a benchmark's business, not a test's).
applies="${CELER_E2E_APPLIES:-20}"
# any_denied NAME TEXT: a Pod NAME in e2e-fed is denied (any 4xx) with TEXT in the message.
any_denied() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF -- "$2"; }
# percentile FILE P: the P-th percentile (nearest rank) of the numbers in FILE.
percentile() { sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print v[i] }'; }
# latencies CREATE DELETE: CREATE I and DELETE I make and remove the policy denying lat-I;
# each is timed until it takes effect. Prints the figures; sets $lost.
latencies() {
  : > "$work/apply-ms"; : > "$work/delete-ms"; lost=0
  local i
  for i in $(seq 1 "$applies"); do
    "$1" "$i"
    wait_for denied "lat-$i" >> "$work/apply-ms" || lost=$((lost + 1))
    "$2" "$i"
    wait_for admitted "lat-$i" >> "$work/delete-ms" || lost=$((lost + 1))
  done
  echo "latency ($3): $applies applies: p50 $(percentile "$work/apply-ms" 50) ms, p99 $(percentile "$work/apply-ms" 99) ms, max $(percentile "$work/apply-ms" 100) ms; deletes: p50 $(percentile "$work/delete-ms" 50) ms, p99 $(percentile "$work/delete-ms" 99) ms, max $(percentile "$work/delete-ms" 100) ms (webhook call included, 20 ms polling)"
}
# wait_for STATE NAME: polls until a Pod NAME is denied/admitted; prints the milliseconds.
wait_for() {
  local start deadline
  start=$(date +%s%N); deadline=$(( $(date +%s) + 10 ))
  while :; do
    if [ "$1" = denied ]; then any_denied "$2" "latency $2" && break; else fed_admitted "$2" && break; fi
    [ "$(date +%s)" -ge "$deadline" ] && { echo timeout; return 1; }
    sleep 0.02
  done
  ms_since "$start"
}
if start_celer latency "${webhook_user[@]}" --register-webhooks --policy-configmaps celer.dev/policies=true; then
  cm_create() { api POST /api/v1/namespaces/celer-e2e/configmaps "$(fed_cm "lat-$1" "latency lat-$1")"; }
  cm_delete() { api DELETE "/api/v1/namespaces/celer-e2e/configmaps/fed-lat-$1"; }
  latencies cm_create cm_delete "policy ConfigMaps"
  check "G1 each of $applies policies applied one at a time is enforced, and stops when deleted, within 10 s" \
    "$lost of $((applies * 2)) changes not seen within 10 s" test "$lost" = 0
  stop_celer TERM
else
  bad "G1 each of $applies policies applied one at a time is enforced, and stops when deleted, within 10 s" "see $celer_log"
fi

# ---------------------------------------------------------------------------------------
echo "--- H. Kyverno's policy kinds as cluster objects (celer's CRDs), with their status"
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
crds_ok=true
"$CELER_BIN" crds --group policies.kyverno.io --output json > "$work/crds.json" || crds_ok=false
while IFS= read -r crd; do
  api POST "$crd_path" "$crd"
  [ "$status" = 201 ] || crds_ok=false
done < <(jq -c '.items[]' "$work/crds.json")
vpol_established() {
  api GET "$crd_path/validatingpolicies.policies.kyverno.io"
  jq -e '.status | objects | .conditions[]? | select(.type == "Established" and .status == "True")' "$work/body.json" >/dev/null
}
if $crds_ok && eventually 30 vpol_established; then
  ok "H0 celer's CRDs for policies.kyverno.io are installed and Established"
else
  bad "H0 celer's CRDs for policies.kyverno.io are installed and Established" "$(last)"
fi
# vpol NAME EXPRESSION MESSAGE: a ValidatingPolicy on Pods of e2e-fed.
vpol() {
  jq -cn --arg name "$1" --arg expression "$2" --arg message "$3" '
    {apiVersion: "policies.kyverno.io/v1", kind: "ValidatingPolicy", metadata: {name: $name},
     spec: {validationActions: ["Deny"],
            matchConstraints: {
              namespaceSelector: {matchLabels: {"kubernetes.io/metadata.name": "e2e-fed"}},
              resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]},
            validations: [{expression: $expression, message: $message}]}}'
}
vpols=/apis/policies.kyverno.io/v1/validatingpolicies
kyverno_denied() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF -- "$2"; }
# A local HTTPS server for Kyverno's http.Get (its own CA): GET /.../NAME answers
# {"allowed": NAME contains "-ok-"}; /slow/... answers after 8 s.
https_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/https-ca.key" -out "$work/https-ca.crt" -days 1 \
  -subj "/CN=celer-e2e-https-ca" >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -keyout "$work/https.key" -out "$work/https.csr" -subj "/CN=127.0.0.1" >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$work/https.ext"
openssl x509 -req -in "$work/https.csr" -CA "$work/https-ca.crt" -CAkey "$work/https-ca.key" -CAcreateserial \
  -out "$work/https.crt" -days 1 -extfile "$work/https.ext" >/dev/null 2>&1
python3 - "$https_port" "$work/https.crt" "$work/https.key" <<'PY' &
import http.server, json, ssl, sys, time
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/slow/"):
            time.sleep(8)
        body = json.dumps({"allowed": "-ok-" in self.path.rsplit("/", 1)[-1]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
https_pid=$!
# A local OCI registry (go-containerregistry's cmd/registry, built from its Go module) for
# Kyverno's image.GetMetadata: team/app:root, an index whose linux/amd64 image runs as user 0,
# and public/app:ok, an image that runs as 1000.
registry_bin="$("$here/go-install.sh" registry github.com/google/go-containerregistry/cmd/registry v0.22.1)"
registry_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$registry_bin" -port "$registry_port" > "$work/registry.log" 2>&1 &
registry_pid=$!
registry_up() { curl -sf "http://127.0.0.1:$registry_port/v2/" >/dev/null; }
registry="127.0.0.1:$registry_port"
if eventually 10 registry_up \
    && "$here/registry-push.py" "$registry" team/app:root '{"User": "0"}' --index > "$work/root-digest" \
    && "$here/registry-push.py" "$registry" public/app:ok '{"User": "1000"}' > /dev/null; then
  :
else
  bad "H22 a local registry to read images from" "see $work/registry.log"
fi
if start_celer kyverno "${webhook_user[@]}" --register-webhooks --policies-from-cluster \
    --http-allow "https://127.0.0.1:$https_port" --lookup-timeout 2s; then
  ok "H1 celer serves the cluster's Kyverno policies"
else
  bad "H1 celer serves the cluster's Kyverno policies" "see $celer_log"
fi
t0=$(date +%s%N)
api POST "$vpols" "$(vpol kyv-names "object.metadata.name != 'kyv-denied'" 'no pod named kyv-denied')"
if eventually 10 kyverno_denied kyv-denied 'admission webhook "vpol.validate.kyverno.svc-fail" denied the request: Policy kyv-names failed: no pod named kyv-denied'; then
  ok "H2 a ValidatingPolicy applied to the API server is enforced, by the webhook Kyverno would name (after $(ms_since "$t0") ms): $(message | head -c 160)"
else
  bad "H2 a ValidatingPolicy applied to the API server is enforced" "$(last)"
fi
vpol_status() {
  api GET "$vpols/$1"
  jq -e "$2" "$work/body.json" >/dev/null
}
if eventually 10 vpol_status kyv-names '.status.conditionStatus.ready == true
    and ([.status.conditionStatus.conditions[] | select(.type == "WebhookConfigured")][0]
         | .status == "True" and .reason == "Succeeded" and .message == "Webhook configured.")'; then
  ok "H3 its status says ready, WebhookConfigured, as Kyverno writes it"
else
  bad "H3 its status says ready, WebhookConfigured, as Kyverno writes it" "status: $(jq -c '.status' "$work/body.json")"
fi
# e2e/manifests/rbac.yaml grants celer no read of Pods: a background scan could not run.
if vpol_status kyv-names '[.status.conditionStatus.conditions[] | select(.type == "RBACPermissionsGranted")][0]
    | .status == "False" and (.message | contains("Resource=pods"))'; then
  ok "H4 RBACPermissionsGranted is False and names the Pods celer may not list (checked, not assumed)"
else
  bad "H4 RBACPermissionsGranted is False and names the Pods celer may not list" "status: $(jq -c '.status' "$work/body.json")"
fi
api POST "$vpols" "$(vpol kyv-broken "object.metadata.name !=== (" 'never')"
if eventually 10 vpol_status kyv-broken '.status.conditionStatus.ready == false
    and ([.status.conditionStatus.conditions[] | select(.type == "WebhookConfigured")][0] | .status == "False")' \
   && kyverno_denied kyv-denied "no pod named kyv-denied"; then
  ok "H5 a ValidatingPolicy that does not compile is not ready, says why on its status, and the others keep serving"
else
  bad "H5 a ValidatingPolicy that does not compile is not ready, says why on its status" "status: $(jq -c '.status' "$work/body.json")"
fi
t0=$(date +%s%N)
api DELETE "$vpols/kyv-names"
if eventually 10 fed_admitted kyv-denied; then
  ok "H6 a deleted ValidatingPolicy stops being enforced (after $(ms_since "$t0") ms)"
else
  bad "H6 a deleted ValidatingPolicy stops being enforced" "$(last)"
fi
api POST "$vpols" '{"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "kyv-no-match"}, "spec": {"validations": [{"expression": "true"}]}}'
if [ "$status" -ge 400 ] && message | grep -qF 'admission webhook "validate-policy.kyverno.svc" denied the request: spec.matchConstraints: Required value: a matchConstraints with at least one resource rule is required' \
    && warnings | grep -qF 'spec.matchConstraints: Required value'; then
  ok "H12 a ValidatingPolicy Kyverno would refuse (no matchConstraints) is refused with Kyverno's error and warning"
else
  bad "H12 a ValidatingPolicy without matchConstraints is refused as Kyverno refuses it" "$status $(message) $(warnings)"
fi
# A sample of the corpus: kyverno-policies' disallow-latest-tag, as its own chainsaw test runs
# it (applied, patched to Deny), and the Pods of that test: the good one admitted, each bad
# one denied.
sample="$corpus/kyverno-policies/best-practices-vpol/disallow-latest-tag"
docs_json() { python3 -c 'import json, sys, yaml; [print(json.dumps(d)) for d in yaml.safe_load_all(open(sys.argv[1])) if d]' "$1"; }
api POST /apis/policies.kyverno.io/v1alpha1/validatingpolicies "$(docs_json "$sample/disallow-latest-tag.yaml")"
api PATCH /apis/policies.kyverno.io/v1alpha1/validatingpolicies/disallow-latest-tag '{"spec":{"validationActions":["Deny"]}}'
sample_denied() { api POST "$(pods default)?dryRun=All" "$1"; [ "$status" -ge 400 ] && [ "$status" -lt 500 ]; }
sample_wrong=0; sample_pods=0
bad_first="$(docs_json "$sample/.chainsaw-test/bad-pod-no-tag.yaml" | sed -n 1p)"
if eventually 10 sample_denied "$bad_first"; then
  while IFS= read -r p; do
    sample_pods=$((sample_pods + 1)); sample_denied "$p" || sample_wrong=$((sample_wrong + 1))
  done < <(for f in "$sample"/.chainsaw-test/bad-pod-*.yaml; do docs_json "$f"; done)
  while IFS= read -r p; do
    sample_pods=$((sample_pods + 1))
    api POST "$(pods default)?dryRun=All" "$p"; [ "$status" = 201 ] || sample_wrong=$((sample_wrong + 1))
  done < <(docs_json "$sample/.chainsaw-test/good-pod.yaml")
else
  sample_wrong=-1
fi
check "H8 kyverno-policies' disallow-latest-tag (v1alpha1, patched to Deny as its chainsaw test does): its $sample_pods test Pods decided as expected through the API server" \
  "$sample_wrong wrong ($(last))" test "$sample_wrong" = 0
api DELETE /apis/policies.kyverno.io/v1alpha1/validatingpolicies/disallow-latest-tag
# A ClusterPolicy with a podSecurity rule (baseline, Enforce) on the Pods of e2e-fed, and a
# kyverno.io/v2 PolicyException exempting one Pod's privileged container from it: Kyverno's
# own kinds, in celer's CRDs.
classic_ok=true
"$CELER_BIN" crds --group kyverno.io --output json > "$work/classic-crds.json" || classic_ok=false
while IFS= read -r crd; do
  api POST "$crd_path" "$crd"
  [ "$status" = 201 ] || classic_ok=false
done < <(jq -c '.items[]' "$work/classic-crds.json")
classic_established() {
  api GET "$crd_path/policyexceptions.kyverno.io"
  jq -e '.status | objects | .conditions[]? | select(.type == "Established" and .status == "True")' "$work/body.json" >/dev/null
}
$classic_ok && eventually 30 classic_established || classic_ok=false
api POST /apis/kyverno.io/v1/clusterpolicies '{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy",
  "metadata":{"name":"psa-baseline"},
  "spec":{"validationFailureAction":"Enforce","background":false,"rules":[{"name":"baseline",
    "match":{"any":[{"resources":{"kinds":["Pod"],"namespaces":["e2e-fed"]}}]},
    "validate":{"podSecurity":{"level":"baseline","version":"latest"}}}]}}'
[ "$status" = 201 ] || classic_ok=false
pss_denied() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" privileged)"
  [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF -- "$2"
}
pss_admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" privileged)"; [ "$status" = 201 ]; }
pss_message='It violates PodSecurity "baseline:latest": (Forbidden reason: privileged, field error list: [spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])'
if $classic_ok && eventually 10 pss_denied pss-denied "$pss_message"; then
  ok "H9 a ClusterPolicy podSecurity rule (baseline, Enforce) applied to the API server refuses a privileged Pod with Kyverno's message: $(message | head -c 200)"
else
  bad "H9 a ClusterPolicy podSecurity rule (baseline, Enforce) refuses a privileged Pod with Kyverno's message" "$(last)"
fi
api POST /apis/kyverno.io/v2/namespaces/e2e-fed/policyexceptions '{"apiVersion":"kyverno.io/v2","kind":"PolicyException",
  "metadata":{"name":"allow-busybox","namespace":"e2e-fed"},
  "spec":{"exceptions":[{"policyName":"psa-baseline","ruleNames":["baseline"]}],
    "match":{"any":[{"resources":{"kinds":["Pod"],"names":["pss-exempt*"]}}]},
    "podSecurity":[{"controlName":"Privileged Containers","images":["busybox*"]}]}}'
exception_status=$status
if [ "$exception_status" = 201 ] && eventually 10 pss_admitted pss-exempt-1 && pss_denied pss-other "$pss_message"; then
  ok "H10 a kyverno.io/v2 PolicyException exempts the Pods it matches from the control it names, and only those"
else
  bad "H10 a kyverno.io/v2 PolicyException exempts the Pods it matches (exception $exception_status)" "$(last)"
fi
api DELETE /apis/kyverno.io/v2/namespaces/e2e-fed/policyexceptions/allow-busybox
if eventually 10 pss_denied pss-exempt-2 "$pss_message"; then
  ok "H11 once the PolicyException is deleted, the Pod it exempted is refused again"
else
  bad "H11 once the PolicyException is deleted, the Pod it exempted is refused again" "$(last)"
fi
api DELETE /apis/kyverno.io/v1/clusterpolicies/psa-baseline
# Kyverno's context functions on the live cluster: a ValidatingPolicy whose decision reads a
# ConfigMap through resource.Get (the webhook user may read ConfigMaps, e2e/manifests/rbac.yaml)
# changes when the ConfigMap does; resource.List counts the Namespaces labelled e2e=ctx.
api POST /api/v1/namespaces/e2e-fed/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kyv-env"},"data":{"env":"prod"}}'
api POST "$vpols" "$(vpol kyv-context "!has(object.metadata.labels) || !('env' in object.metadata.labels) || object.metadata.labels.env == resource.Get('v1', 'configmaps', 'e2e-fed', 'kyv-env').data.env" 'env label must match ConfigMap kyv-env')"
env_denied() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted "{\"env\":\"$2\"}")"
  [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF 'env label must match ConfigMap kyv-env'
}
env_admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted "{\"env\":\"$2\"}")"; [ "$status" = 201 ]; }
if eventually 10 env_denied ctx-1 dev && env_admitted ctx-2 prod; then
  api PATCH /api/v1/namespaces/e2e-fed/configmaps/kyv-env '{"data":{"env":"dev"}}'
  if eventually 10 env_admitted ctx-3 dev && env_denied ctx-4 prod; then
    ok "H13 a ValidatingPolicy reading a ConfigMap with resource.Get decides by its data, and by the new data once it changes"
  else
    bad "H13 after the ConfigMap changed, the decision follows its new data" "$(last)"
  fi
else
  bad "H13 a ValidatingPolicy reading a ConfigMap with resource.Get decides by its data" "$(last)"
fi
api DELETE "$vpols/kyv-context"
api DELETE /api/v1/namespaces/e2e-fed/configmaps/kyv-env
api POST "$vpols" "$(vpol kyv-list "size(resource.List('v1', 'namespaces', '', {'e2e': 'ctx'}).items) < 1" 'a Namespace labelled e2e=ctx exists')"
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"e2e-ctx","labels":{"e2e":"ctx"}}}'
if eventually 10 kyverno_denied ctx-5 'a Namespace labelled e2e=ctx exists'; then
  ok "H14 resource.List of Namespaces by label reads the live cluster: $(message | head -c 160)"
else
  bad "H14 resource.List of Namespaces by label reads the live cluster" "$(last)"
fi
api DELETE "$vpols/kyv-list"
api DELETE /api/v1/namespaces/e2e-ctx
# Kyverno's GlobalContextEntries (kyverno.io, celer's CRDs installed above), kept by celer: one
# watching the ConfigMaps of e2e-fed, one calling the API server every second; policies read
# their JMESPath projections with globalContext.Get.
api POST /apis/kyverno.io/v2alpha1/globalcontextentries '{"apiVersion":"kyverno.io/v2alpha1","kind":"GlobalContextEntry",
  "metadata":{"name":"gctx-watch"},
  "spec":{"kubernetesResource":{"version":"v1","resource":"configmaps","namespace":"e2e-fed"},
    "projections":[{"name":"names","jmesPath":"[?metadata.labels.e2e == '"'gctx'"'].metadata.name"}]}}'
gctx_watch_status=$status
api POST /apis/kyverno.io/v2alpha1/globalcontextentries '{"apiVersion":"kyverno.io/v2alpha1","kind":"GlobalContextEntry",
  "metadata":{"name":"gctx-call"},
  "spec":{"apiCall":{"urlPath":"/api/v1/namespaces/e2e-fed/configmaps?labelSelector=e2e%3Dgctx","refreshInterval":"1s"},
    "projections":[{"name":"count","jmesPath":"items | length(@)"}]}}'
gctx_call_status=$status
api POST "$vpols" "$(vpol kyv-gctx-watch "!(object.metadata.name in globalContext.Get('gctx-watch', 'names'))" 'a ConfigMap labelled e2e=gctx has this name')"
api POST "$vpols" "$(vpol kyv-gctx-call "globalContext.Get('gctx-call', 'count') < 2" 'two ConfigMaps labelled e2e=gctx exist')"
api POST /api/v1/namespaces/e2e-fed/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gctx-a","labels":{"e2e":"gctx"}}}'
if [ "$gctx_watch_status" = 201 ] && eventually 15 kyverno_denied gctx-a 'a ConfigMap labelled e2e=gctx has this name' \
   && fed_admitted gctx-b; then
  ok "H15 a kubernetesResource GlobalContextEntry follows its watch: a Pod named after a labelled ConfigMap is denied, another admitted"
else
  bad "H15 a kubernetesResource GlobalContextEntry follows its watch (entry $gctx_watch_status)" "$(last)"
fi
api POST /api/v1/namespaces/e2e-fed/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gctx-b","labels":{"e2e":"gctx"}}}'
gctx_refreshed() {
  api GET /apis/kyverno.io/v2alpha1/globalcontextentries/gctx-call
  jq -e '.status.lastRefreshTime | strings' "$work/body.json" >/dev/null
}
if [ "$gctx_call_status" = 201 ] && eventually 15 kyverno_denied gctx-c 'two ConfigMaps labelled e2e=gctx exist' \
    && eventually 10 gctx_refreshed; then
  ok "H16 an apiCall GlobalContextEntry refreshed every second: its projection counts the second ConfigMap, the policy reading it denies, and its status.lastRefreshTime is written ($(jq -r .status.lastRefreshTime "$work/body.json"))"
else
  bad "H16 an apiCall GlobalContextEntry refreshed every second (entry $gctx_call_status)" "$(last)"
fi
for name in gctx-watch gctx-call; do api DELETE "$vpols/kyv-$name"; api DELETE "/apis/kyverno.io/v2alpha1/globalcontextentries/$name"; done
for name in gctx-a gctx-b; do api DELETE "/api/v1/namespaces/e2e-fed/configmaps/$name"; done
# Kyverno's mutate-existing: a MutatingPolicy whose trigger is an UPDATE of Namespace e2e-mx
# and whose targets are the ConfigMaps of Namespaces labelled mx=enabled. Applying it labels
# the ConfigMap there now (it does not skip background requests, so its creation runs it); a
# ConfigMap made later is labelled once the trigger is updated.
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"e2e-mx","labels":{"mx":"enabled"}}}'
api POST /api/v1/namespaces/e2e-mx/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mx-1"}}'
api POST /apis/policies.kyverno.io/v1/mutatingpolicies '{"apiVersion":"policies.kyverno.io/v1","kind":"MutatingPolicy",
  "metadata":{"name":"kyv-mutate-existing"},
  "spec":{"evaluation":{"mutateExisting":{"enabled":true},"skipBackgroundRequests":false},
    "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["UPDATE"],"resources":["namespaces"],"resourceNames":["e2e-mx"]}]},
    "targetMatchConstraints":{"namespaceSelector":{"matchLabels":{"mx":"enabled"}},
      "resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["UPDATE"],"resources":["configmaps"]}]},
    "mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{metadata: Object.metadata{labels: Object.metadata.labels{mutated: \"existing\"}}}"}}]}}'
mx_status=$status
mx_labelled() { api GET "/api/v1/namespaces/e2e-mx/configmaps/$1"; [ "$(jq -r '.metadata.labels.mutated // empty' "$work/body.json")" = existing ]; }
if [ "$mx_status" = 201 ] && eventually 15 mx_labelled mx-1; then
  ok "H17 a mutate-existing MutatingPolicy applied to the API server labels the ConfigMap it targets (policy creation)"
else
  bad "H17 a mutate-existing MutatingPolicy labels its existing target on creation (policy $mx_status)" "$(last) $(jq -c '.metadata.labels' "$work/body.json" 2>/dev/null)"
fi
api POST /api/v1/namespaces/e2e-mx/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mx-2"}}'
sleep 1
mx_trigger() { api PATCH /api/v1/namespaces/e2e-mx '{"metadata":{"annotations":{"e2e/touched":"'"$(date +%s%N)"'"}}}'; [ "$status" = 200 ]; }
if ! mx_labelled mx-2 && mx_trigger && eventually 15 mx_labelled mx-2; then
  ok "H18 updating the trigger Namespace labels a ConfigMap made after the policy (admission trigger)"
else
  bad "H18 updating the trigger Namespace labels the ConfigMap made after the policy" "$(last) $(jq -c '.metadata.labels' "$work/body.json" 2>/dev/null)"
fi
api DELETE /apis/policies.kyverno.io/v1/mutatingpolicies/kyv-mutate-existing
api DELETE /api/v1/namespaces/e2e-mx
# The CEL authorizer answered by the API server: a ClusterPolicy validate.cel rule admits a Pod
# labelled authz=NAME only if the service account e2e-fed/NAME may delete Pods there (granted
# to `deleter` by a RoleBinding, not to `nobody`).
api POST /apis/rbac.authorization.k8s.io/v1/namespaces/e2e-fed/roles '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
  "metadata":{"name":"pod-deleter"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["delete"]}]}'
api POST /apis/rbac.authorization.k8s.io/v1/namespaces/e2e-fed/rolebindings '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
  "metadata":{"name":"pod-deleter"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-deleter"},
  "subjects":[{"kind":"ServiceAccount","name":"deleter","namespace":"e2e-fed"}]}'
api POST /apis/kyverno.io/v1/clusterpolicies '{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy",
  "metadata":{"name":"kyv-authz","annotations":{"pod-policies.kyverno.io/autogen-controllers":"none"}},
  "spec":{"rules":[{"name":"authz","match":{"any":[{"resources":{"kinds":["Pod"],"namespaces":["e2e-fed"]}}]},
    "validate":{"failureAction":"Enforce","cel":{"expressions":[{"message":"that service account may not delete Pods",
      "expression":"!has(object.metadata.labels) || !(\"authz\" in object.metadata.labels) || authorizer.serviceAccount(\"e2e-fed\", object.metadata.labels.authz).group(\"\").resource(\"pods\").namespace(\"e2e-fed\").check(\"delete\").allowed()"}]}}}]}}'
authz_status=$status
authz_denied() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted "{\"authz\":\"$2\"}")"
  [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF 'that service account may not delete Pods'
}
authz_admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted "{\"authz\":\"$2\"}")"; [ "$status" = 201 ]; }
if [ "$authz_status" = 201 ] && eventually 10 authz_denied authz-1 nobody && authz_admitted authz-2 deleter; then
  ok "H19 the CEL authorizer asks the API server: a Pod naming a service account that may delete Pods is admitted, one that may not is denied"
else
  bad "H19 the CEL authorizer asks the API server (policy $authz_status)" "$(last)"
fi
api DELETE /apis/kyverno.io/v1/clusterpolicies/kyv-authz
api DELETE /apis/rbac.authorization.k8s.io/v1/namespaces/e2e-fed/rolebindings/pod-deleter
api DELETE /apis/rbac.authorization.k8s.io/v1/namespaces/e2e-fed/roles/pod-deleter
# Kyverno's http.Get to the local HTTPS server, trusted through http.Client(its CA): the
# answer decides; a server slower than --lookup-timeout fails the call inside the webhook's
# timeout. In a matchCondition the policy's failurePolicy decides on that error (Kyverno
# applies it there; an erroring validation denies whatever it says): Fail refuses naming the
# timeout, Ignore admits.
ca_cel="$(awk '{printf "%s\\n", $0}' "$work/https-ca.crt")"
http_get() { echo "http.Client('$ca_cel').Get('https://127.0.0.1:$https_port/$1' + object.metadata.name).allowed"; }
api POST "$vpols" "$(vpol kyv-http "!object.metadata.name.startsWith('http-') || $(http_get check/)" 'the HTTPS service said no')"
http_status=$status
if [ "$http_status" = 201 ] && eventually 10 kyverno_denied http-no-1 'the HTTPS service said no' && env_admitted http-ok-1 x; then
  ok "H20 http.Get to an allowed HTTPS server with the policy's CA decides: its 'no' denies, its 'yes' admits"
else
  bad "H20 http.Get to an allowed HTTPS server decides (policy $http_status)" "$(last)"
fi
api DELETE "$vpols/kyv-http"
slow_policy() {
  jq -c --arg fp "$2" --arg condition "object.metadata.name.startsWith('$3') && $(http_get slow/)" \
    '.spec.failurePolicy = $fp | .spec.matchConditions = [{name: "slow", expression: $condition}]' \
    <<<"$(vpol "$1" "false" 'the slow service was asked')"
}
api POST "$vpols" "$(slow_policy kyv-http-slow Fail slow-fail-)"
api POST "$vpols" "$(slow_policy kyv-http-slow-ignore Ignore slow-ignore-)"
slow_failed() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"
  [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qiF 'timeout'
}
if eventually 20 slow_failed slow-fail-1 && env_admitted slow-ignore-ok-1 x; then
  ok "H21 an HTTPS call slower than --lookup-timeout fails inside the webhook's timeout: in a matchCondition, failurePolicy Fail refuses naming it, Ignore admits"
else
  bad "H21 a slow HTTPS call follows failurePolicy" "$(last)"
fi
api DELETE "$vpols/kyv-http-slow"
api DELETE "$vpols/kyv-http-slow-ignore"
# Kyverno's image.GetMetadata against the local registry: the image's own config decides (an
# index resolves to its linux/amd64 image); an image the registry does not have fails the
# call, and the erroring validation denies naming it.
image_pod() { jq -c --arg image "$2" '.spec.containers[0].image = $image' <<<"$(pod "$1" restricted)"; }
image_admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(image_pod "$1" "$2")"; [ "$status" = 201 ]; }
image_denied() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(image_pod "$1" "$2")"
  [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF -- "$3"
}
api POST "$vpols" "$(vpol kyv-image "!object.metadata.name.startsWith('img-') || object.spec.containers.all(c, image.GetMetadata(c.image).config.config.User != '0')" 'the image runs as root')"
image_status=$status
if [ "$image_status" = 201 ] && eventually 10 image_denied img-root-1 "$registry/team/app:root" 'the image runs as root' \
    && image_admitted img-ok-1 "$registry/public/app:ok" \
    && image_denied img-root-2 "$registry/team/app@$(cat "$work/root-digest")" 'the image runs as root'; then
  ok "H22 image.GetMetadata reads the registry: an index's amd64 image running as root is denied (by tag and by digest), an image running as 1000 admitted"
else
  bad "H22 image.GetMetadata reads the registry (policy $image_status)" "$(last)"
fi
if image_denied img-missing-1 "$registry/nothing/here:v1" 'not found'; then
  ok "H23 an image the registry does not have fails image.GetMetadata, and the policy denies naming it: $(message | head -c 200)"
else
  bad "H23 an image the registry does not have fails image.GetMetadata" "$(last)"
fi
api DELETE "$vpols/kyv-image"
# A GlobalContextEntry whose apiCall names a service (the local HTTPS server, trusted through
# the entry's caBundle, allowed by --http-allow): its answer is the entry's data.
api POST /apis/kyverno.io/v2alpha1/globalcontextentries "$(jq -cn --arg url "https://127.0.0.1:$https_port/check/svc-ok-1" \
  --rawfile ca "$work/https-ca.crt" '{apiVersion: "kyverno.io/v2alpha1", kind: "GlobalContextEntry",
    metadata: {name: "gctx-svc"},
    spec: {apiCall: {service: {url: $url, caBundle: $ca}, refreshInterval: "1s"},
           projections: [{name: "allowed", jmesPath: "allowed"}]}}')"
gctx_svc_status=$status
api POST "$vpols" "$(vpol kyv-gctx-svc "!object.metadata.name.startsWith('svc-') || !globalContext.Get('gctx-svc', 'allowed')" 'the service entry says allowed')"
if [ "$gctx_svc_status" = 201 ] && eventually 15 kyverno_denied svc-1 'the service entry says allowed'; then
  ok "H24 an apiCall GlobalContextEntry with a service URL holds the service's answer (HTTPS with the entry's caBundle), and the policy reading it decides"
else
  bad "H24 an apiCall GlobalContextEntry with a service URL (entry $gctx_svc_status)" "$(last)"
fi
api DELETE "$vpols/kyv-gctx-svc"
api DELETE /apis/kyverno.io/v2alpha1/globalcontextentries/gctx-svc
vpol_create() { api POST "$vpols" "$(vpol "lat-$1" "object.metadata.name != 'lat-$1'" "latency lat-$1")"; }
vpol_delete() { api DELETE "$vpols/lat-$1"; }
latencies vpol_create vpol_delete "ValidatingPolicy objects"
check "H7 each of $applies ValidatingPolicies applied one at a time is enforced, and stops when deleted, within 10 s" \
  "$lost of $((applies * 2)) changes not seen within 10 s" test "$lost" = 0
stop_celer TERM

# ---------------------------------------------------------------------------------------
echo "--- I. Gatekeeper as cluster objects: a template makes its Constraint kind, a Constraint is enforced"
crds_ok=true
for group in templates.gatekeeper.sh config.gatekeeper.sh syncset.gatekeeper.sh externaldata.gatekeeper.sh mutations.gatekeeper.sh; do
  "$CELER_BIN" crds --group "$group" --output json > "$work/gk-crds.json" || crds_ok=false
  while IFS= read -r crd; do
    api POST "$crd_path" "$crd"
    [ "$status" = 201 ] || crds_ok=false
  done < <(jq -c '.items[]' "$work/gk-crds.json")
done
crd_established() {
  api GET "$crd_path/$1"
  jq -e '.status | objects | .conditions[]? | select(.type == "Established" and .status == "True")' "$work/body.json" >/dev/null
}
$crds_ok && eventually 30 crd_established constrainttemplates.templates.gatekeeper.sh || bad "I0 ConstraintTemplate CRD" "$(last)"
to_json() { python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$1"; }
template="$corpus/gatekeeper-library/library/general/requiredlabels/template.yaml"
if start_celer gatekeeper "${webhook_user[@]}" --register-webhooks --policies-from-cluster; then
  ok "I0 celer serves the cluster's Gatekeeper policies"
else
  bad "I0 celer serves the cluster's Gatekeeper policies" "see $celer_log"
fi
templates=/apis/templates.gatekeeper.sh/v1/constrainttemplates
api POST "$templates" "$(to_json "$template")"
if [ "$status" = 201 ] && eventually 15 crd_established k8srequiredlabels.constraints.gatekeeper.sh; then
  ok "I1 a ConstraintTemplate (gatekeeper-library requiredlabels) makes its Constraint kind, Established"
else
  bad "I1 a ConstraintTemplate (gatekeeper-library requiredlabels) makes its Constraint kind" "$(last)"
fi
constraint='{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sRequiredLabels","metadata":{"name":"pods-need-owner"},"spec":{"match":{"kinds":[{"apiGroups":[""],"kinds":["Pod"]}],"namespaces":["e2e-fed"]},"parameters":{"labels":[{"key":"owner"}]}}}'
constraint_made() { api POST /apis/constraints.gatekeeper.sh/v1beta1/k8srequiredlabels "$constraint"; [ "$status" = 201 ] || [ "$status" = 409 ]; }
eventually 10 constraint_made
if eventually 10 any_denied unowned "missing required label, requires all of: owner"; then
  ok "I2 a Constraint of that kind is enforced, with Gatekeeper's message: $(message | head -c 160)"
else
  bad "I2 a Constraint of that kind is enforced, with Gatekeeper's message" "$(last)"
fi
api POST "$(pods e2e-fed)?dryRun=All" "$(pod owned restricted '{"owner":"me"}')"
expect "I3 a Pod with the label is admitted" 201
template_status() {
  api GET "$templates/k8srequiredlabels"
  jq -e '.status.created == true and (.status.byPod | length) == 1 and (.status.byPod[0].errors | not)' "$work/body.json" >/dev/null
}
constraint_status() {
  api GET /apis/constraints.gatekeeper.sh/v1beta1/k8srequiredlabels/pods-need-owner
  jq -e '.status.byPod[0].enforced == true' "$work/body.json" >/dev/null
}
if eventually 10 template_status && eventually 10 constraint_status; then
  ok "I4 the template's status says created (byPod), the Constraint's says enforced"
else
  bad "I4 the template's status says created (byPod), the Constraint's says enforced" "$(jq -c '.status' "$work/body.json")"
fi
# A second replica, as a Deployment's second Pod would be (same certificate and URL): each
# writes its own byPod entry with its own field manager, and the entries merge (byPod is a
# map-list keyed by id in celer's CRDs) instead of one replica's list replacing the other's.
pid_a=$celer_pid; port_a=$celer_port
mkdir -p "$work/tls-gatekeeper-b" && cp "$work/tls-gatekeeper/ca.crt" "$work/tls-gatekeeper-b/ca.crt"
if CELER_REPLICA_NAME=celer-e2e-b start_celer gatekeeper-b "${webhook_user[@]}" --register-webhooks \
    --policies-from-cluster --tls-cert "$work/tls-gatekeeper/tls.crt" --tls-key "$work/tls-gatekeeper/tls.key" \
    --webhook-url "https://127.0.0.1:$port_a" --webhook-ca-bundle "$work/tls-gatekeeper/ca.crt"; then
  pid_b=$celer_pid
else
  pid_b=""
fi
two_replicas() {
  api GET "$templates/k8srequiredlabels"
  jq -e '[.status.byPod[].id] | unique | length == 2 and any(. == "celer-e2e-b")' "$work/body.json" >/dev/null || return 1
  api GET /apis/constraints.gatekeeper.sh/v1beta1/k8srequiredlabels/pods-need-owner
  jq -e '[.status.byPod[] | select(.enforced == true) | .id] | unique | length == 2' "$work/body.json" >/dev/null
}
if [ -n "$pid_b" ] && eventually 15 two_replicas; then
  ok "I6 two replicas each keep their own byPod entry (template and Constraint)"
else
  bad "I6 two replicas each keep their own byPod entry (template and Constraint)" "$(jq -c '.status' "$work/body.json")"
fi
[ -n "$pid_b" ] && { celer_pid=$pid_b; stop_celer TERM; }
celer_pid=$pid_a; celer_port=$port_a
# A Rego template over data.inventory: gatekeeper-library's uniqueingresshost, with the
# Config syncing Ingresses. The first Ingress is synced from its watch; a second with the
# same host is then denied by the Rego that reads the first from data.inventory.
config='{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config","metadata":{"name":"config","namespace":"e2e-fed"},"spec":{"sync":{"syncOnly":[{"group":"networking.k8s.io","version":"v1","kind":"Ingress"}]}}}'
api POST /apis/config.gatekeeper.sh/v1alpha1/namespaces/e2e-fed/configs "$config"
config_status=$status
unique="$corpus/gatekeeper-library/library/general/uniqueingresshost"
api POST "$templates" "$(to_json "$unique/template.yaml")"
eventually 15 crd_established k8suniqueingresshost.constraints.gatekeeper.sh || true
unique_made() {
  api POST /apis/constraints.gatekeeper.sh/v1beta1/k8suniqueingresshost "$(to_json "$unique/samples/unique-ingress-host/constraint.yaml")"
  [ "$status" = 201 ] || [ "$status" = 409 ]
}
eventually 10 unique_made || true
ingress() {
  printf '{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"%s","namespace":"e2e-fed"},"spec":{"rules":[{"host":"shop.example.com","http":{"paths":[{"pathType":"Prefix","path":"/","backend":{"service":{"name":"shop","port":{"number":80}}}}]}}]}}' "$1"
}
api POST /apis/networking.k8s.io/v1/namespaces/e2e-fed/ingresses "$(ingress shop-first)"
first_status=$status
second_denied() {
  api POST "/apis/networking.k8s.io/v1/namespaces/e2e-fed/ingresses?dryRun=All" "$(ingress shop-second)"
  # jq decodes the message: the API server writes < and > as \u003c and \u003e.
  [ "$status" = 403 ] && [[ "$(jq -r '.message' "$work/body.json")" == *'[unique-ingress-host] ingress host conflicts with an existing ingress <shop.example.com>'* ]]

}
if [ "$config_status" = 201 ] && [ "$first_status" = 201 ] && eventually 20 second_denied; then
  ok "I7 a Rego template reads data.inventory synced by the Config: a second Ingress with a taken host is denied"
else
  bad "I7 a Rego template reads data.inventory synced by the Config (Config $config_status, first Ingress $first_status)" "$(last)"
fi
api DELETE /apis/networking.k8s.io/v1/namespaces/e2e-fed/ingresses/shop-first
# The deletion reaches data.inventory through the synced kind's watch: the host is free again.
second_admitted() {
  api POST "/apis/networking.k8s.io/v1/namespaces/e2e-fed/ingresses?dryRun=All" "$(ingress shop-second)"
  [ "$status" = 201 ]
}
if [ "$first_status" = 201 ] && eventually 20 second_admitted; then
  ok "I7b a synced object deleted leaves data.inventory: the second Ingress is admitted"
else
  bad "I7b a synced object deleted leaves data.inventory" "$(last)"
fi
api DELETE "$templates/k8suniqueingresshost"
# A Gatekeeper mutator as a cluster object: AssignMetadata adds a label to Pods in e2e-fed,
# through celer's mutating webhook.
mutator='{"apiVersion":"mutations.gatekeeper.sh/v1","kind":"AssignMetadata","metadata":{"name":"team-label"},"spec":{"match":{"scope":"Namespaced","kinds":[{"apiGroups":[""],"kinds":["Pod"]}],"namespaces":["e2e-fed"]},"location":"metadata.labels.team","parameters":{"assign":{"value":"platform"}}}}'
api POST /apis/mutations.gatekeeper.sh/v1/assignmetadata "$mutator"
mutator_status=$status
labelled() {
  api POST "$(pods e2e-fed)?dryRun=All" "$(pod labelled restricted '{"owner":"me"}')"
  [ "$status" = 201 ] && jq -e '.metadata.labels.team == "platform"' "$work/body.json" >/dev/null
}
if [ "$mutator_status" = 201 ] && eventually 20 labelled; then
  ok "I8 a Gatekeeper AssignMetadata applied to the API server labels the Pods it matches"
else
  bad "I8 a Gatekeeper AssignMetadata applied to the API server labels the Pods it matches (mutator $mutator_status)" "$(last)"
fi
api DELETE /apis/mutations.gatekeeper.sh/v1/assignmetadata/team-label
api DELETE "$templates/k8srequiredlabels"
crd_gone() { api GET "$crd_path/k8srequiredlabels.constraints.gatekeeper.sh"; [ "$status" = 404 ]; }
if eventually 15 crd_gone && eventually 10 fed_admitted unowned; then
  ok "I5 deleting the template removes its Constraint kind, and nothing is enforced any more"
else
  bad "I5 deleting the template removes its Constraint kind, and nothing is enforced any more" "$(last)"
fi
stop_celer TERM

floor="$(awk -F'\t' '$1 == "passing" { print $2 }' "$here/run.ratchet")"
if [ "$pass" -lt "${floor:-0}" ]; then
  bad "ratchet" "$pass checks passed, fewer than the $floor of e2e/run.ratchet"
elif [ "$pass" -gt "${floor:-0}" ]; then
  echo "note: $pass checks passed, more than the $floor of e2e/run.ratchet: raise it"
fi
echo "e2e: $pass passed, $fail failed ($(( $(date +%s) - started ))s)"
if [ "$fail" -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
