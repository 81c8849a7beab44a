#!/usr/bin/env bash
# `celer controller` at scale (issue 17's targets), on the e2e API server: N Pods of about
# 3 KB (default 20,000) created in 20 namespaces, then the controller started with the 19 Pod
# Security policies embedded in celer (native ValidatingAdmissionPolicies): the wall time
# until every Pod is scanned (API server listing included), the time until every report is
# written, the controller's peak RSS throughout (sampled every 100 ms), the time from one
# Pod's creation to its report, and the report writes across two rescans of unchanged Pods.
# Then the report bytes: M Pods (default 1,000) in a namespace of their own scanned with
# Kyverno's restricted Pod Security ClusterPolicy (one validate.podSecurity rule), and with
# the 19 native policies; the bytes are those of the report objects as the API server returns
# them (JSON, managedFields included: what it stores in etcd, less etcd's key and framing).
# A benchmark, not a test: it prints figures, and fails only when something did not happen.
#
#   e2e/bench-controller.sh [N] [M]
#
# CELER_BIN: the celer to run [target/release/celer, built if missing]; the settings of
# e2e/control-plane.sh. The control plane is started and stopped (CELER_E2E_KEEP=1 keeps it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
work="${CELER_E2E_WORK:-$repo/target/e2e/bench-controller}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"
count="${1:-20000}"
sizing="${2:-1000}"

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

# pods NAMESPACE_PREFIX NAMESPACES COUNT: creates them (8 connections), prints the seconds.
create_pods() {
  python3 - "$@" <<'EOF'
import http.client, json, os, ssl, sys, threading, time, urllib.parse
prefix, namespaces, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
ctx = ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"])
headers = {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"], "Content-Type": "application/json"}
def connect():
    return http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
c = connect()
for n in range(namespaces):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"{prefix}-{n}"}}
    c.request("POST", "/api/v1/namespaces", json.dumps(body), headers)
    r = c.getresponse(); r.read()
def pod(i):
    # About 3 KB: labels, annotations, two containers with env and resources; baseline
    # compliant, restricted not (no seccomp profile, privilege escalation not disallowed).
    env = [{"name": f"SETTING_{k}", "value": f"value-{k}-{i:06d}"} for k in range(12)]
    container = lambda name: {"name": name, "image": f"registry.example/app/{name}:1.{i % 50}",
        "ports": [{"containerPort": 8080, "name": "http"}], "env": env,
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
        "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}}
    return {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"pod-{i:06d}", "namespace": f"{prefix}-{i % namespaces}",
            "labels": {"app": f"app-{i % 100}", "tier": "web", "team": f"team-{i % 7}", "release": "stable"},
            "annotations": {"example.com/owner": f"owner-{i % 13}@example.com", "example.com/ticket": f"T-{i:08d}",
                "example.com/description": "a pod made by the controller benchmark " * 3}},
        "spec": {"containers": [container("app"), container("sidecar")], "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 5}}
errors = []
def worker(lo, hi):
    c = connect()
    for i in range(lo, hi):
        body = json.dumps(pod(i))
        for attempt in range(5):
            try:
                c.request("POST", f"/api/v1/namespaces/{prefix}-{i % namespaces}/pods", body, headers)
                r = c.getresponse(); r.read()
                if r.status == 201:
                    break
                if r.status == 429:
                    time.sleep(0.2); continue
                errors.append(f"pod {i}: HTTP {r.status}"); break
            except (OSError, http.client.HTTPException):
                c = connect()
start = time.time()
step = (count + 7) // 8
threads = [threading.Thread(target=worker, args=(k * step, min(count, (k + 1) * step))) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    sys.exit(f"{len(errors)} pods not created, first: {errors[0]}")
print(f"{time.time() - start:.1f}")
EOF
}

metric() { curl -fsS "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null | awk -v m="$1" '$1 == m { print $2; f=1 } END { if (!f) print 0 }'; }
sample_rss() { # writes the peak RSS in KiB to $work/rss-peak until killed
  local peak=0 rss
  while kill -0 "$1" 2>/dev/null; do
    rss="$(awk '/VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null)"
    [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && { peak=$rss; echo "$peak" > "$work/rss-peak"; }
    sleep 0.1
  done
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# report_bytes NAMESPACE: the bytes of its Reports as the API server returns each (JSON).
report_bytes() {
  python3 - "$1" <<'EOF'
import http.client, json, os, ssl, sys, urllib.parse
ns = sys.argv[1]
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
c = http.client.HTTPSConnection(url.hostname, url.port, context=ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"]))
h = {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"]}
total = count = fails = 0
cont = ""
while True:
    c.request("GET", f"/apis/openreports.io/v1alpha1/namespaces/{ns}/reports?limit=500" + (f"&continue={cont}" if cont else ""), headers=h)
    page = json.loads(c.getresponse().read())
    for item in page["items"]:
        item.setdefault("apiVersion", "openreports.io/v1alpha1"); item.setdefault("kind", "Report")
        total += len(json.dumps(item, separators=(",", ":")))
        count += 1
        fails += sum(1 for r in item.get("results", []) if r["result"] == "fail")
    cont = page["metadata"].get("continue", "")
    if not cont:
        break
print(f"{count} reports, {total} bytes ({total / max(count, 1):.0f} per report), {fails} failing results")
EOF
}

echo "--- report bytes: $sizing Pods"
secs="$(create_pods sizing 1 "$sizing")" || exit 1
cat > "$work/restricted.yaml" <<'EOF'
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: podsecurity-restricted
  annotations:
    policies.kyverno.io/category: Pod Security
    policies.kyverno.io/severity: medium
spec:
  background: true
  rules:
  - name: restricted
    match:
      any:
      - resources:
          kinds: [Pod]
          namespaces: [sizing-0]
    validate:
      failureAction: Audit
      podSecurity:
        level: restricted
        version: latest
EOF
for policies in restricted embedded; do
  args=(--policies "$work/restricted.yaml")
  [ "$policies" = embedded ] && args=()
  metrics_port="$(free_port)"
  setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --lease-namespace default "${args[@]}" \
    --exclude-namespace kube-system --report-writes-per-second 1000 \
    --metrics-addr "127.0.0.1:$metrics_port" > "$work/controller-$policies.log" 2>&1 < /dev/null &
  controller_pid=$!
  until [ "$(metric celer_controller_synced)" = 1 ] && [ "$(metric celer_report_queue_depth)" = 0 ]; do sleep 0.5; done
  sleep 2
  echo "$policies ($( [ "$policies" = embedded ] && echo '19 native ValidatingAdmissionPolicies' || echo "Kyverno's podSecurity restricted ClusterPolicy")): $(report_bytes sizing-0)"
  kill -TERM "$controller_pid"; wait "$controller_pid" 2>/dev/null; controller_pid=""
  sleep 3
done

echo "--- creating $count Pods of about 3 KB in 20 namespaces"
secs="$(create_pods scan 20 "$count")" || exit 1
echo "created in ${secs}s"


echo "--- celer controller (embedded Pod Security: 19 ValidatingAdmissionPolicies)"
metrics_port="$(free_port)"
t0=$(now_ms)
setsid "$CELER_BIN" controller --kubeconfig "$KUBECONFIG" --lease-namespace default \
  --exclude-namespace kube-system --report-writes-per-second 1000 --rescan-interval 30s \
  --metrics-addr "127.0.0.1:$metrics_port" --log-level info > "$work/controller.log" 2>&1 < /dev/null &
controller_pid=$!
sample_rss "$controller_pid" & sampler_pid=$!
until [ "$(metric celer_controller_synced)" = 1 ]; do
  kill -0 "$controller_pid" 2>/dev/null || { echo "FAIL controller exited"; tail "$work/controller.log"; exit 1; }
  [ $(( $(now_ms) - t0 )) -gt 600000 ] && { echo "FAIL not synced in 600 s"; exit 1; }
  sleep 0.05
done
scanned_ms=$(( $(now_ms) - t0 ))
scanned="$(metric 'celer_scan_objects_total{resource="pods"}')"
echo "scanned: $scanned Pods listed and scanned ${scanned_ms} ms after start (leader election and discovery included)"
until [ "$(metric celer_report_queue_depth)" = 0 ] && [ "$(metric 'celer_report_writes_total{operation="apply"}')" -ge "$count" ]; do
  [ $(( $(now_ms) - t0 )) -gt 900000 ] && { echo "FAIL reports not written in 900 s"; exit 1; }
  sleep 0.2
done
written_ms=$(( $(now_ms) - t0 ))
echo "reports: $(metric 'celer_report_writes_total{operation="apply"}') written ${written_ms} ms after start (at most 1,000 writes/s)"

# One Pod more: the time until its report exists.
t1=$(now_ms)
python3 - <<'EOF'
import http.client, json, os, ssl, urllib.parse
url = urllib.parse.urlparse(os.environ["CELER_E2E_SERVER"])
c = http.client.HTTPSConnection(url.hostname, url.port, context=ssl.create_default_context(cafile=os.environ["CELER_E2E_CA"]))
body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "namespace": "scan-0"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "securityContext": {"privileged": True}}]}}
c.request("POST", "/api/v1/namespaces/scan-0/pods", json.dumps(body), {"Authorization": "Bearer " + os.environ["CELER_E2E_TOKEN"], "Content-Type": "application/json"})
r = c.getresponse(); r.read(); assert r.status == 201, r.status
EOF
api GET /api/v1/namespaces/scan-0/pods/late
uid="$(jq -r .metadata.uid "$work/body.json")"
until api GET "/apis/openreports.io/v1alpha1/namespaces/scan-0/reports/$uid" && [ "$status" = 200 ]; do
  [ $(( $(now_ms) - t1 )) -gt 30000 ] && { echo "FAIL no report for a new Pod in 30 s"; exit 1; }
  sleep 0.01
done
echo "incremental: a new Pod's report exists $(( $(now_ms) - t1 )) ms after its creation (polled every 10 ms)"

writes_before="$(metric 'celer_report_writes_total{operation="apply"}')"
rescans_before="$(metric 'celer_scan_full_total{resource="pods"}')"
until [ "$(metric 'celer_scan_full_total{resource="pods"}')" -ge $(( rescans_before + 2 )) ]; do sleep 1; done
echo "rescans: 2 more full listings of $count Pods, report writes $writes_before -> $(metric 'celer_report_writes_total{operation="apply"}'), last listing $(metric 'celer_scan_duration_seconds{resource="pods"}') s"
echo "peak RSS: $(( $(cat "$work/rss-peak") / 1024 )) MiB throughout"
kill "$sampler_pid" 2>/dev/null; sampler_pid=""
kill -TERM "$controller_pid"; wait "$controller_pid" 2>/dev/null; controller_pid=""


