#!/usr/bin/env bash
# Many policies as cluster objects (issue 16's targets): N Kyverno ValidatingPolicies (default
# 5,000) created in the e2e API server, then `celer serve --policies-from-cluster` started:
# the time until /readyz says ready with all N loaded, its RSS then; then one policy changed
# and the time until the change is enforced (every reload rebuilds the whole set today: this
# is that rebuild's cost with N loaded), and one created and deleted likewise. A benchmark,
# not a test: it prints figures and asserts only that each change took effect.
#
#   e2e/bench-objects.sh [N]
#
# CELER_BIN: the celer to run [target/release/celer, built if missing]; the settings of
# e2e/control-plane.sh. The control plane is started and stopped (CELER_E2E_KEEP=1 keeps it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench-objects}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
count="${1:-5000}"

cleanup() {
  stop_celer TERM
  [ "${CELER_E2E_KEEP:-}" = 1 ] || "$here/control-plane.sh" down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${CELER_BIN:-}" ]; then
  cargo build --release -p celer --locked --quiet || exit 1
  CELER_BIN="$repo/target/release/celer"
fi
"$here/control-plane.sh" up > "$work/env.sh" || exit 1
# shellcheck disable=SC1091
source "$work/env.sh"
"$here/apply.py" "$here/manifests" || exit 1
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
while IFS= read -r crd; do api POST "$crd_path" "$crd"; done \
  < <("$CELER_BIN" crds --group policies.kyverno.io --output json | jq -c '.items[]')
sleep 2

echo "--- creating $count ValidatingPolicies"
started=$(date +%s%N)
python3 - "$count" <<'EOF'
import http.client, json, os, ssl, sys, urllib.parse
count = int(sys.argv[1])
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
headers = {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"], "Content-Type": "application/json"}
for i in range(count):
    body = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy",
            "metadata": {"name": f"bulk-{i}"},
            "spec": {"validationActions": ["Deny"],
                     "matchConstraints": {
                         "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "e2e-fed"}},
                         "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
                     "validations": [{"expression": f"object.metadata.name != 'bulk-{i}'", "message": f"no pod named bulk-{i}"}]}}
    conn.request("POST", "/apis/policies.kyverno.io/v1/validatingpolicies", json.dumps(body), headers)
    resp = conn.getresponse()
    resp.read()
    if resp.status != 201:
        sys.exit(f"create bulk-{i}: HTTP {resp.status}")
EOF
echo "created $count in $(( ($(date +%s%N) - started) / 1000000 )) ms"

echo "--- celer serve --policies-from-cluster"
started=$(date +%s%N)
start_celer objects --kubeconfig "$CELER_E2E_WEBHOOK_KUBECONFIG" --register-webhooks --policies-from-cluster || exit 1
ready_ms=$(( ($(date +%s%N) - started) / 1000000 ))
loaded="$(grep -o 'policies loaded.*validating=[0-9]*' "$celer_log" | grep -o 'validating=[0-9]*' | head -1)"
rss_kib="$(awk '/VmRSS/ { print $2 }' "/proc/$celer_pid/status")"
echo "ready: $ready_ms ms after start (start_celer polls every 200 ms), $loaded, RSS $(( rss_kib / 1024 )) MiB"

denied() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" -ge 400 ] && [ "$status" -lt 500 ] && message | grep -qF -- "$2"; }
admitted() { api POST "$(pods e2e-fed)?dryRun=All" "$(pod "$1" restricted)"; [ "$status" = 201 ]; }
# timed WHAT COMMAND...: runs COMMAND until it succeeds (20 ms apart, 60 s at most).
timed() {
  local what="$1" t0 deadline; shift
  t0=$(date +%s%N); deadline=$(( $(date +%s) + 60 ))
  until "$@"; do
    [ "$(date +%s)" -ge "$deadline" ] && { echo "FAIL $what: not within 60 s"; return 1; }
    sleep 0.02
  done
  echo "$what: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}
denied bulk-7 "no pod named bulk-7" || echo "FAIL bulk-7 not denied at ready"
api PATCH /apis/policies.kyverno.io/v1/validatingpolicies/bulk-7 \
  '{"spec":{"validations":[{"expression":"object.metadata.name != '"'"'changed-7'"'"'","message":"no pod named changed-7"}]}}'
timed "one of $count changed, until enforced" denied changed-7 "no pod named changed-7"
api POST /apis/policies.kyverno.io/v1/validatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"extra"},"spec":{"validationActions":["Deny"],"matchConstraints":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"e2e-fed"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}]},"validations":[{"expression":"object.metadata.name != '"'"'extra'"'"'","message":"no pod named extra"}]}}'
timed "one more created, until enforced" denied extra "no pod named extra"
api DELETE /apis/policies.kyverno.io/v1/validatingpolicies/extra
timed "that one deleted, until no longer enforced" admitted extra
rss_kib="$(awk '/VmRSS/ { print $2 }' "/proc/$celer_pid/status")"
hwm_kib="$(awk '/VmHWM/ { print $2 }' "/proc/$celer_pid/status")"
echo "after: RSS $(( rss_kib / 1024 )) MiB, peak $(( hwm_kib / 1024 )) MiB"
grep -c "policies reloaded" "$celer_log" | sed 's/^/reloads: /'
