#!/usr/bin/env bash
# A DeletingPolicy at scale (issue 21's target), on the e2e API server: N ConfigMaps (default
# 20,000) in 20 namespaces, half of them `state: done` and all labelled `expire: "true"`, and
# as many more unlabelled (which the policy's objectSelector leaves out), then `celer
# controller` started with --deletions-per-second R (default 200) and a DeletingPolicy made
# for them (schedule every minute; condition `state == done`). Measures the run: the seconds
# from its first deletion to the last (the policy's deletions per second against R), the
# controller's peak RSS, the deletions and failures its metrics count, and the requests the
# API server answered 429 (Too Many Requests) from the policy's creation to the end of its
# run, from its own metrics. A
# benchmark, not a test: it prints figures, and fails only when the ConfigMaps meant to go are
# not all gone within the time R allows (plus two minutes), when one that should stay was
# deleted, or when a request was throttled.
#
#   e2e/bench-deleting.sh [N] [R]
#
# CELER_BIN: the celer to run [target/release/celer, built if missing]; the settings of
# e2e/control-plane.sh. The control plane is started and stopped (CELER_E2E_KEEP=1 keeps it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench-deleting}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
count="${1:-20000}"
rate="${2:-200}"
namespaces=20

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

echo "--- $count labelled ConfigMaps (half of them done) and $count unlabelled, in $namespaces namespaces"
python3 - "$count" "$namespaces" <<'EOF' || exit 1
import http.client, json, os, ssl, sys, threading, time, urllib.parse
count, namespaces = int(sys.argv[1]), int(sys.argv[2])
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
headers = {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"], "Content-Type": "application/json"}
def connect():
    return http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
c = connect()
for n in range(namespaces):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"jobs-{n}"}}
    c.request("POST", "/api/v1/namespaces", json.dumps(body), headers)
    r = c.getresponse(); r.read()
def configmap(i):
    labelled = i < count
    j = i % count
    return {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{'job' if labelled else 'keep'}-{j:06d}", "namespace": f"jobs-{j % namespaces}",
            "labels": {"expire": "true"} if labelled else {"team": "a"}},
        "data": {"state": "done" if j % 2 == 0 else "running", "log": "x" * 200}}
errors = []
def worker(lo, hi):
    c = connect()
    for i in range(lo, hi):
        cm = configmap(i)
        body = json.dumps(cm)
        for attempt in range(5):
            try:
                c.request("POST", f"/api/v1/namespaces/{cm['metadata']['namespace']}/configmaps", body, headers)
                r = c.getresponse(); r.read()
                if r.status == 201:
                    break
                if r.status == 429:
                    time.sleep(0.2); continue
                errors.append(f"{i}: HTTP {r.status}"); break
            except (OSError, http.client.HTTPException):
                c = connect()
start = time.time()
total = 2 * count
step = (total + 7) // 8
threads = [threading.Thread(target=worker, args=(k * step, min(total, (k + 1) * step))) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    sys.exit(f"{len(errors)} ConfigMaps not created, first: {errors[0]}")
print(f"created in {time.time() - start:.1f}s")
EOF

apiserver_429() { # requests kube-apiserver answered 429, from its /metrics
  api_raw GET /metrics | awk '/^apiserver_request_total\{/ && /code="429"/ { n += $2 } END { print n + 0 }'
}
apiserver_429_detail() { # the 429 series, by verb and resource
  api_raw GET /metrics | grep '^apiserver_request_total{' | grep 'code="429"' \
    | sed -E 's/^apiserver_request_total/  /'
}
api_raw() {
  curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" "$CELER_E2E_SERVER$2"
}
metrics_port="$(free_port)"
setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --policies-from-cluster \
  --lease-namespace default --metrics-addr "127.0.0.1:$metrics_port" --log-level warn \
  --deletions-per-second "$rate" > "$work/controller.log" 2>&1 < /dev/null &
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
metric() { curl -fsS "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null | awk -v m="$1" '$1 == m { print $2; f=1 } END { if (!f) print 0 }'; }

# The controller's own start (its watches listing) is done before the run is counted.
sleep 5
throttled_before="$(apiserver_429)"
api POST /apis/policies.kyverno.io/v1beta1/deletingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1beta1","kind":"DeletingPolicy","metadata":{"name":"done-jobs"},"spec":{"schedule":"*/1 * * * *","deletionPropagationPolicy":"Background","matchConstraints":{"objectSelector":{"matchLabels":{"expire":"true"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]},"conditions":[{"name":"done","expression":"object.data.?state.orValue(\"\") == \"done\""}]}}'
[ "$status" = 201 ] || { echo "FAIL DeletingPolicy: HTTP $status: $(message)"; exit 1; }

to_delete=$(( count / 2 ))
budget=$(( to_delete / rate + 180 ))
echo "--- waiting for $to_delete deletions at $rate a second (due on the next minute; at most ${budget}s)"
deadline=$(( $(date +%s) + budget ))
first=""
while :; do
  deleted="$(metric 'celer_deleting_deleted_total{policy="done-jobs"}')"
  deleted="${deleted%.*}"
  now=$(date +%s%N)
  if [ -z "$first" ] && [ "${deleted:-0}" -gt 0 ]; then first=$now; fi
  runs="$(metric 'celer_deleting_runs_total{policy="done-jobs"}')"
  [ "${runs%.*}" -ge 1 ] && break
  [ "$(date +%s)" -ge "$deadline" ] && { echo "FAIL the run did not end within ${budget}s (deleted ${deleted:-0})"; exit 1; }
  sleep 0.2
done
last=$now
failures="$(metric 'celer_deleting_failures_total{policy="done-jobs"}')"
throttled=$(( $(apiserver_429) - throttled_before ))

remaining() { # remaining LABEL_SELECTOR: ConfigMaps left with it, across the namespaces
  api_raw GET "/api/v1/configmaps?labelSelector=$1&limit=100000" | jq '.items | length'
}
left_labelled="$(remaining expire%3Dtrue)"
left_unlabelled="$(remaining team%3Da)"
seconds="$(awk -v a="${first:-$last}" -v b="$last" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
achieved="$(awk -v n="${deleted:-0}" -v s="$seconds" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "-" }')"
echo "deleted: ${deleted:-0} of $to_delete in ${seconds}s (${achieved}/s against --deletions-per-second $rate)"
echo "left: $left_labelled labelled (expected $(( count - to_delete ))), $left_unlabelled unlabelled (expected $count)"
echo "failures counted: ${failures%.*}; requests the API server throttled (429) during the run: $throttled"
[ "$throttled" = 0 ] || { echo "the 429s since the API server started:"; apiserver_429_detail; }
echo "controller peak RSS: $(( $(cat "$work/rss-peak" 2>/dev/null || echo 0) / 1024 )) MiB"
status=0
[ "${deleted:-0}" = "$to_delete" ] || { echo "FAIL not every done ConfigMap deleted"; status=1; }
[ "$left_labelled" = $(( count - to_delete )) ] && [ "$left_unlabelled" = "$count" ] || { echo "FAIL a ConfigMap that should stay is gone"; status=1; }
[ "${failures%.*}" = 0 ] || { echo "FAIL failures: $(grep -i -m3 'fail' "$work/controller.log")"; status=1; }
[ "$throttled" = 0 ] || { echo "FAIL the API server throttled $throttled requests"; status=1; }
exit "$status"
