#!/usr/bin/env bash
# Runs a command against the e2e control plane set up one of five ways, for the side-by-side
# of native policies, celer and the peer engines on the same kube-apiserver (issues 9 and 15):
#
#   e2e/bench-env.sh none                -- COMMAND...   no policies at all
#   e2e/bench-env.sh native PATH...      -- COMMAND...   the policies applied to kube-apiserver
#   e2e/bench-env.sh celer  PATH...      -- COMMAND...   the same policies served by celer as a
#                                                        registered webhook (failurePolicy Fail)
#   e2e/bench-env.sh floor               -- COMMAND...   the serving floor (e2e/lib.sh's
#                                                        start_floor: celer's TLS and HTTP stack,
#                                                        no engine, everything allowed) registered
#                                                        as a mutating and a validating webhook
#                                                        for Pod CREATE/UPDATE, as celer's are
#   e2e/bench-env.sh kyverno PATH...     -- COMMAND...   Kyverno (e2e/peers/peer.sh) started,
#   e2e/bench-env.sh gatekeeper PATH...  -- COMMAND...   or Gatekeeper, the engine's own policy
#                                                        objects in PATH applied; COMMAND runs
#                                                        once a noncompliant Pod is denied
# e.g.
#   e2e/bench-env.sh celer policies/bench-contract -- \
#     target/release/celer bench --kube --kubeconfig target/e2e/control-plane/admin.kubeconfig
#
# The control plane is started if it is not running (and then stopped at the end, unless
# CELER_E2E_KEEP=1); every admission policy, binding and celer webhook configuration is
# deleted first, so the modes never mix; namespace policy-bench is created. COMMAND runs with
# the environment of `e2e/control-plane.sh env` plus CELER_E2E_APISERVER_PID and, in celer
# mode, CELER_E2E_CELER_PID (for CPU and RSS from /proc; the peer's pid in a peer's mode). CELER_BIN: the celer that serves
# [target/release/celer]; CELER_SERVE_ARGS: more arguments for it.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench}"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

mode="${1:-}"; shift || true
paths=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do paths+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
case "$mode" in none|native|celer|floor|kyverno|gatekeeper) ;; *) sed -n '2,31p' "$0" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then echo "bench-env: no command after --" >&2; exit 2; fi
if [ "$mode" != none ] && [ "$mode" != floor ] && [ ${#paths[@]} -eq 0 ]; then echo "bench-env: $mode needs policy paths" >&2; exit 2; fi

started_plane=0
cleanup() {
  stop_celer TERM
  if [ "$mode" = kyverno ] || [ "$mode" = gatekeeper ]; then
    # The policies first: the peer's own webhooks may check their deletion.
    "$here/apply.py" delete "${paths[@]}" >/dev/null 2>&1
    "$here/peers/peer.sh" stop "$mode"
  fi
  if [ "$mode" = celer ] || [ "$mode" = floor ]; then
    api DELETE /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer
    api DELETE /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/celer
  fi
  if [ "$started_plane" = 1 ] && [ "${CELER_E2E_KEEP:-}" != 1 ]; then
    "$here/control-plane.sh" down
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! "$here/control-plane.sh" status >/dev/null 2>&1; then
  "$here/control-plane.sh" up > "$work/env.sh" || exit 1
  started_plane=1
fi
"$here/control-plane.sh" env > "$work/env.sh"
# shellcheck disable=SC1091
source "$work/env.sh"
export CELER_E2E_APISERVER_PID="$(cat "$CELER_E2E_DIR/kube-apiserver.pid")"

# A clean slate: no native policies, no celer webhooks.
for kind in validatingadmissionpolicybindings validatingadmissionpolicies \
    mutatingadmissionpolicybindings mutatingadmissionpolicies; do
  api DELETE "/apis/admissionregistration.k8s.io/v1/$kind"
done
api DELETE /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer
api DELETE /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/celer
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"policy-bench"}}'

case "$mode" in
  native)
    "$here/apply.py" "${paths[@]}" || exit 1
    # kube-apiserver compiles and loads policies a moment after they are stored.
    sleep 3
    ;;
  celer)
    CELER_BIN="${CELER_BIN:-$repo/target/release/celer}"
    policy_args=()
    for p in "${paths[@]}"; do policy_args+=(--policies "$p"); done
    # shellcheck disable=SC2086
    start_celer bench --kubeconfig "$KUBECONFIG" --register-webhooks "${policy_args[@]}" \
      ${CELER_SERVE_ARGS:-} || exit 1
    export CELER_E2E_CELER_PID="$celer_pid"
    # kube-apiserver picks up a new webhook configuration a moment after it is stored.
    sleep 2
    ;;
  floor)
    start_floor bench || exit 1
    export CELER_E2E_CELER_PID="$celer_pid"
    ca="$(base64 -w0 < "$work/tls-bench/ca.crt")"
    for kind in mutating validating; do
      path=mutate; [ "$kind" = validating ] && path=validate
      api POST "/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations" "$(jq -cn \
        --arg kind "$kind" --arg url "https://127.0.0.1:$celer_port/$path" --arg ca "$ca" '
        {apiVersion: "admissionregistration.k8s.io/v1",
         kind: (if $kind == "mutating" then "MutatingWebhookConfiguration" else "ValidatingWebhookConfiguration" end),
         metadata: {name: "celer"},
         webhooks: [{name: "floor.celer.dev", clientConfig: {url: $url, caBundle: $ca},
           rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"]}],
           failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"], timeoutSeconds: 10}]}')"
      if [ "$status" != 201 ]; then echo "bench-env: floor: $kind webhook not registered ($status)" >&2; cat "$work/body.json" >&2; exit 1; fi
    done
    sleep 2
    ;;
  kyverno|gatekeeper)
    "$here/peers/peer.sh" start "$mode" || exit 1
    export CELER_E2E_CELER_PID="$("$here/peers/peer.sh" pid "$mode")"
    # A peer's policy objects may be refused for a while (Gatekeeper: a Constraint's CRD comes
    # from its template), and are enforced only after the peer has read them.
    applied=0
    for _ in $(seq 1 60); do
      if "$here/apply.py" "${paths[@]}" > "$work/apply.log" 2>&1; then applied=1; break; fi
      sleep 1
    done
    if [ "$applied" != 1 ]; then echo "bench-env: $mode: policies not applied:" >&2; cat "$work/apply.log" >&2; exit 1; fi
    enforced=0
    for _ in $(seq 1 120); do
      if "${CELER_BIN:-$repo/target/release/celer}" bench --kube --kubeconfig "$KUBECONFIG" \
          --namespace policy-bench --noncompliant --rate 5 --count 1 --expect denied --quiet \
          --output json 2>/dev/null | jq -e '.run.errors.mismatch == 0 and .run.successful == 1' >/dev/null; then
        enforced=1; break
      fi
      sleep 1
    done
    if [ "$enforced" != 1 ]; then echo "bench-env: $mode: a noncompliant Pod is still admitted after 120 s" >&2; exit 1; fi
    ;;
esac
echo "bench-env: $mode${paths[*]:+ (${paths[*]})}; running: $*" >&2
"$@"
