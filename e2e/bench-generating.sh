#!/usr/bin/env bash
# A GeneratingPolicy at scale (issue 21's target), on the e2e API server: `celer controller`
# started with a GeneratingPolicy (generateExisting and synchronize on) that generates a
# NetworkPolicy and a ResourceQuota into every Namespace labelled `bench: "yes"`, then N such
# Namespaces (default 10,000) created as fast as 8 connections go. Measures the seconds from
# the last Namespace's creation until every downstream object is present, the controller's
# peak RSS, and what the API server stores afterwards: its own count of objects per resource
# (`apiserver_storage_objects`) before and after, so that anything but the Namespaces and
# their downstream objects shows (Kyverno would have stored an UpdateRequest per trigger). A
# benchmark, not a test: it prints figures, and fails only when a downstream object is
# missing after ten minutes.
#
#   e2e/bench-generating.sh [N]
#
# CELER_BIN: the celer to run [target/release/celer, built if missing]; the settings of
# e2e/control-plane.sh. The control plane is started and stopped (CELER_E2E_KEEP=1 keeps it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench-generating}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
count="${1:-10000}"

controller_pid=""
sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$controller_pid" ] && kill -TERM "$controller_pid" 2>/dev/null
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
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
while IFS= read -r crd; do api POST "$crd_path" "$crd"; done \
  < <("$CELER_BIN" crds --output json | jq -c '.items[]')
sleep 3

api_raw() {
  curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" "$@"
}
stored() { # resource<TAB>objects, from the API server's own count
  api_raw "$CELER_E2E_SERVER/metrics" | awk '/^apiserver_storage_objects\{/ {
    match($0, /resource="[^"]*"/); r = substr($0, RSTART + 10, RLENGTH - 11); print r "\t" $2 }' | sort
}
# The API server counts stored objects once a minute: wait for its first count.
for _ in $(seq 1 90); do
  stored > "$work/stored-before.tsv"
  grep -q '^namespaces	' "$work/stored-before.tsv" && break
  sleep 1
done

api POST /apis/policies.kyverno.io/v1beta1/generatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"GeneratingPolicy","metadata":{"name":"ns-baseline"},"spec":{"evaluation":{"generateExisting":{"enabled":true},"synchronize":{"enabled":true}},"matchConstraints":{"objectSelector":{"matchLabels":{"bench":"yes"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["namespaces"]}]},"generate":[{"expression":"generator.Apply(object.metadata.name, [{\"apiVersion\": dyn(\"networking.k8s.io/v1\"), \"kind\": dyn(\"NetworkPolicy\"), \"metadata\": dyn({\"name\": \"default-deny\"}), \"spec\": dyn({\"podSelector\": dyn({}), \"policyTypes\": dyn([\"Ingress\"])})}, {\"apiVersion\": dyn(\"v1\"), \"kind\": dyn(\"ResourceQuota\"), \"metadata\": dyn({\"name\": \"baseline\"}), \"spec\": dyn({\"hard\": dyn({\"pods\": \"50\"})})}])"}]}}'
[ "$status" = 201 ] || { echo "FAIL GeneratingPolicy: HTTP $status: $(message)"; exit 1; }

metrics_port="$(free_port)"
setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --policies-from-cluster \
  --lease-namespace default --metrics-addr "127.0.0.1:$metrics_port" --log-level warn \
  > "$work/controller.log" 2>&1 < /dev/null &
controller_pid=$!
disown "$controller_pid"
sample_rss() {
  local peak=0 rss
  while kill -0 "$1" 2>/dev/null; do
    rss="$(awk '/VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null)"
    [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && { peak=$rss; echo "$peak" > "$work/rss-peak"; }
    sleep 0.1
  done
}
sample_rss "$controller_pid" &
sampler_pid=$!
sleep 3

echo "--- $count Namespaces"
python3 - "$count" > "$work/created.txt" <<'EOF' || exit 1
import http.client, json, os, ssl, sys, threading, time, urllib.parse
count = int(sys.argv[1])
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
headers = {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"], "Content-Type": "application/json"}
def connect():
    return http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
errors = []
def worker(lo, hi):
    c = connect()
    for i in range(lo, hi):
        body = json.dumps({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": f"tenant-{i:05d}", "labels": {"bench": "yes"}}})
        for attempt in range(5):
            try:
                c.request("POST", "/api/v1/namespaces", body, headers)
                r = c.getresponse(); r.read()
                if r.status == 201:
                    break
                if r.status == 429:
                    time.sleep(0.2); continue
                errors.append(f"{i}: HTTP {r.status}"); break
            except (OSError, http.client.HTTPException):
                c = connect()
start = time.time()
step = (count + 7) // 8
threads = [threading.Thread(target=worker, args=(k * step, min(count, (k + 1) * step))) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    sys.exit(f"{len(errors)} Namespaces not created, first: {errors[0]}")
print(f"{time.time() - start:.1f} {time.time():.3f}")
EOF
read -r creation last_created < "$work/created.txt"
echo "created in ${creation}s"

count_of() { # count_of PATH: items with the policy's label
  api_raw -H 'Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' \
    "$CELER_E2E_SERVER$1?labelSelector=generate.kyverno.io%2Fpolicy-name%3Dns-baseline" | jq '.items | length'
}
deadline=$(( $(date +%s) + 600 ))
while :; do
  netpols="$(count_of /apis/networking.k8s.io/v1/networkpolicies)"
  quotas="$(count_of /api/v1/resourcequotas)"
  [ "${netpols:-0}" -ge "$count" ] && [ "${quotas:-0}" -ge "$count" ] && break
  [ "$(date +%s)" -ge "$deadline" ] && { echo "FAIL after 10 minutes: $netpols NetworkPolicies, $quotas ResourceQuotas of $count"; exit 1; }
  sleep 1
done
done_at="$(date +%s.%N)"
after="$(awk -v a="$last_created" -v b="$done_at" 'BEGIN { printf "%.1f", b - a }')"
echo "every downstream object present ${after}s after the last Namespace ($netpols NetworkPolicies, $quotas ResourceQuotas)"
echo "controller peak RSS: $(( $(cat "$work/rss-peak" 2>/dev/null || echo 0) / 1024 )) MiB"
# ...and again, up to a minute later, until it has seen the downstream objects.
for _ in $(seq 1 90); do
  stored > "$work/stored-after.tsv"
  [ "$(awk -F'\t' '$1 == "resourcequotas" { print int($2) }' "$work/stored-after.tsv")" -ge "$count" ] 2>/dev/null && break
  sleep 1
done
echo "stored objects that changed (resource: before -> after):"
join -a 2 -e 0 -o 0,1.2,2.2 -t $'\t' "$work/stored-before.tsv" "$work/stored-after.tsv" \
  | awk -F'\t' '$2 != $3 { printf "  %s: %d -> %d\n", $1, $2, $3 }'
