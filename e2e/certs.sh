#!/usr/bin/env bash
# `celer serve --tls-secret` end to end: two replicas sharing one Secret for their CA and
# serving certificate, each registered as a webhook of kube-apiserver (failurePolicy Fail, so
# every Pod passes through both), with lifetimes small enough that serving certificates are
# renewed every 25 s and a CA rotation runs its three stages within two minutes, under a load
# of dry-run Pod CREATEs through the API server (docs/certificates.md).
#
#   e2e/certs.sh
#
# Environment: CELER_BIN (default: target/debug/celer, built if missing); CELER_E2E_WORK,
# scratch [target/e2e/certs]; the control plane's settings, with their own defaults here so
# that other e2e runs on the machine do not collide: CELER_E2E_APISERVER_PORT [19443],
# CELER_E2E_ETCD_PORT [19379], CELER_E2E_DIR [target/e2e/certs-control-plane];
# CELER_E2E_CERTS_LOAD, seconds of load [125]; CELER_E2E_CERTS_RATE, Pods a second [20].
#
# Checks:
#   S1 two replicas started at the same instant with no Secret: one Secret is created (one
#      replica writes it, the other reads the winner's), owned by the installation's
#      ClusterRole (--webhook-owner-clusterrole), and both serve the same certificate, the
#      Secret's
#   S2 both webhook configurations carry the Secret's ca.crt as their caBundle
#   S3 the load: every dry-run Pod CREATE through kube-apiserver (through both webhooks)
#      is admitted, none fails, across serving renewals and a full CA rotation
#   S4 a full CA rotation: a new CA staged in ca.crt, signing once the overlap has passed,
#      the first CA dropped from ca.crt at its end; the Secret always written with its
#      resourceVersion (conflicts are read again, never a second rotation)
#   S5 each replica served certificates of both CA generations (openssl s_client, sampled
#      every second), and every certificate it served verified against the caBundle then
#      registered in its webhook configuration
#   S6 /metrics: the serving certificate's notAfter and the count of swaps
#   S7 the Secret deleted under both replicas: both see it go and race to create a new one;
#      one does, the other's create is refused (409) and it serves the winner's
#   S8 cert-manager's way (files): a replica serving --tls-cert/--tls-key registers
#      --webhook-ca-bundle, and registers it again when the file changes (a CA rotated in the
#      mounted Secret)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/certs}"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/certs-control-plane}"
export CELER_E2E_APISERVER_PORT="${CELER_E2E_APISERVER_PORT:-19443}"
export CELER_E2E_ETCD_PORT="${CELER_E2E_ETCD_PORT:-19379}"
load_seconds="${CELER_E2E_CERTS_LOAD:-125}"
rate="${CELER_E2E_CERTS_RATE:-20}"
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

started=$(date +%s)
if [ -z "${CELER_BIN:-}" ]; then
  (cd "$repo" && cargo build -p celer --locked --quiet) || { echo "FAIL build: cargo build -p celer"; exit 1; }
  CELER_BIN="$repo/target/debug/celer"
fi

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
  done
  sleep 0.5
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  "$here/control-plane.sh" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

env_lines="$("$here/control-plane.sh" up)" || { echo "FAIL control-plane: did not start (see above)"; exit 1; }
eval "$env_lines"

# The webhook user: what cluster mode and registration need (e2e/manifests/rbac.yaml), and
# the Secret, as a chart would grant it: create (which cannot be limited to a name), and get,
# list, watch and update of that name only.
"$here/apply.py" "$here/manifests/rbac.yaml" >/dev/null || { echo "FAIL rbac: not applied"; exit 1; }
for ns in celer-system policy-bench; do
  api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
api POST /apis/rbac.authorization.k8s.io/v1/namespaces/celer-system/roles '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
  "metadata":{"name":"celer-tls"},"rules":[
  {"apiGroups":[""],"resources":["secrets"],"verbs":["create"]},
  {"apiGroups":[""],"resources":["secrets"],"resourceNames":["celer-tls"],"verbs":["get","list","watch","update"]}]}'
api POST /apis/rbac.authorization.k8s.io/v1/namespaces/celer-system/rolebindings '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
  "metadata":{"name":"celer-tls"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"celer-tls"},
  "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"celer:webhook"}]}'
[ "$status" = 201 ] || { echo "FAIL rbac: the Secret's RoleBinding: HTTP $status"; exit 1; }
# The installation's ClusterRole, read for its uid: the Secret names it as its owner.
api POST /apis/rbac.authorization.k8s.io/v1/clusterroles '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
  "metadata":{"name":"celer-owner"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"resourceNames":["celer-webhook"],"verbs":["get"]}]}'
api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
  "metadata":{"name":"celer-owner"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"celer-owner"},
  "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"celer:webhook"}]}'
[ "$status" = 201 ] || { echo "FAIL rbac: the owner's ClusterRoleBinding: HTTP $status"; exit 1; }

secret_path=/api/v1/namespaces/celer-system/secrets/celer-tls
config_path() { echo "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/celer-$1"; }

# start_replica NAME: `celer serve` on the shared Secret, registered as configuration
# celer-NAME; connections last 3 s at most, so the API server makes new handshakes all along.
start_replica() {
  local name="$1" port mport
  port="$(free_port)"; mport="$(free_port)"
  eval "port_$name=$port; mport_$name=$mport"
  setsid "$CELER_BIN" serve --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
    --kubeconfig "$CELER_E2E_WEBHOOK_KUBECONFIG" --register-webhooks --webhook-name "celer-$name" \
    --tls-secret celer-system/celer-tls --tls-san celer.celer-system.svc \
    --webhook-owner-clusterrole celer-webhook \
    --tls-ca-lifetime 2m --tls-ca-renew-before 60s --tls-ca-overlap 10s \
    --tls-cert-lifetime 40s --tls-cert-renew-before 15s \
    --max-connection-age 3s --log-level info \
    > "$work/celer-$name.log" 2>&1 < /dev/null &
  pids+=($!)
  disown "$!"
}
ready() { # ready NAME: /readyz answers and the webhooks are registered
  local mport
  eval "mport=\$mport_$1"
  curl -fsS "http://127.0.0.1:$mport/readyz" >/dev/null 2>&1 &&
    grep -q "webhook configurations registered" "$work/celer-$1.log"
}
wait_for() { # wait_for SECONDS COMMAND...
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}
served() { # served NAME: the leaf certificate the replica serves now (PEM)
  local port
  eval "port=\$port_$1"
  openssl s_client -connect "127.0.0.1:$port" -servername localhost </dev/null 2>/dev/null |
    openssl x509 2>/dev/null
}
fingerprint() { openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2; }

echo "--- two replicas at once, no Secret yet"
api GET "$secret_path"
[ "$status" = 404 ] || { echo "FAIL setup: the Secret exists before the replicas start"; exit 1; }
start_replica a
start_replica b
if ! wait_for 60 ready a || ! wait_for 60 ready b; then
  echo "FAIL start: replicas not ready"; tail -n 20 "$work"/celer-*.log; exit 1
fi
secret_ready=$(date +%s)
api GET "$secret_path"
cp "$work/body.json" "$work/secret-first.json"
jq -r '.data["tls.crt"]' "$work/secret-first.json" | base64 -d > "$work/secret-tls.crt"
secret_fp="$(fingerprint < "$work/secret-tls.crt")"
fp_a="$(served a | fingerprint)"; fp_b="$(served b | fingerprint)"
creates="$(cat "$work"/celer-*.log | grep -c 'certificate Secret written.*Create')"
owner="$(jq -r '.metadata.ownerReferences[0] | "\(.kind)/\(.name)"' "$work/secret-first.json")"
if [ "$status" = 200 ] && [ "$creates" = 1 ] && [ "$owner" = ClusterRole/celer-webhook ] && [ -n "$secret_fp" ] && [ "$fp_a" = "$secret_fp" ] && [ "$fp_b" = "$secret_fp" ]; then
  ok "S1 one Secret made by one replica of two started at once, owned by the installation's ClusterRole; both serve its certificate ($(grep -l 'certificate Secret written.*Create' "$work"/celer-*.log | xargs -n1 basename) wrote it)"
else
  bad "S1 one Secret, one certificate" "HTTP $status, $creates creates, owner $owner, Secret $secret_fp, a $fp_a, b $fp_b"
fi

bundle_of() { # bundle_of NAME: the caBundle registered for replica NAME (PEM)
  curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
    "$CELER_E2E_SERVER$(config_path "$1")" | jq -r '.webhooks[0].clientConfig.caBundle // empty' | base64 -d
}
secret_bundle="$(jq -r '.data["ca.crt"]' "$work/secret-first.json" | base64 -d)"
if [ -n "$secret_bundle" ] && [ "$(bundle_of a)" = "$secret_bundle" ] && [ "$(bundle_of b)" = "$secret_bundle" ]; then
  ok "S2 both webhook configurations carry the Secret's ca.crt"
else
  bad "S2 caBundle is the Secret's ca.crt" "a: $(bundle_of a | head -c 80)..., b: $(bundle_of b | head -c 80)..."
fi

echo "--- load: $rate dry-run Pod CREATEs a second for ${load_seconds}s through kube-apiserver and both webhooks"
# sample: every second, the certificate each replica serves, its issuer, and whether the
# caBundle registered for that replica at that moment verifies it.
sample() {
  local name leaf issuer verified
  while [ -e "$work/sampling" ]; do
    for name in a b; do
      leaf="$work/sample-$name.pem"
      served "$name" > "$leaf" || continue
      [ -s "$leaf" ] || continue
      issuer="$(openssl x509 -in "$leaf" -noout -issuer 2>/dev/null | sed 's/^issuer=//')"
      bundle_of "$name" > "$work/sample-$name-bundle.pem"
      if openssl verify -purpose sslserver -CAfile "$work/sample-$name-bundle.pem" "$leaf" >/dev/null 2>&1; then
        verified=yes
      else
        verified=no
      fi
      printf '%s\t%s\t%s\t%s\t%s\n' "$(date +%s)" "$name" "$(fingerprint < "$leaf")" "$verified" "$issuer" >> "$work/samples.tsv"
    done
    sleep 1
  done
}
touch "$work/sampling"
sample &
sampler=$!
"$CELER_BIN" bench --kube --kubeconfig "$KUBECONFIG" --namespace policy-bench \
  --rate "$rate" --duration "${load_seconds}s" --expect allowed --timeout 15s \
  --output json --quiet > "$work/bench.json" 2> "$work/bench.err"
bench_status=$?
rm -f "$work/sampling"
wait "$sampler" 2>/dev/null

requests="$(jq -r '.run.requests // 0' "$work/bench.json" 2>/dev/null || echo 0)"
successful="$(jq -r '.run.successful // 0' "$work/bench.json" 2>/dev/null || echo 0)"
errors="$(jq -c '.run.errors // {}' "$work/bench.json" 2>/dev/null || echo '{}')"
p99="$(jq -r '.run.scheduled.p99 // "?"' "$work/bench.json" 2>/dev/null || echo '?')"
expected=$(( rate * load_seconds ))
if [ "$bench_status" = 0 ] && [ "$requests" -ge "$expected" ] && [ "$successful" = "$requests" ]; then
  ok "S3 $successful of $requests dry-run Pod CREATEs admitted through both webhooks during the rotation, none failed (scheduled p99 ${p99} ms)"
else
  bad "S3 no failed request" "bench exit $bench_status, $successful of $requests (expected $expected) successful, errors $errors; $(jq -c '.run.failure_samples[:3]' "$work/bench.json" 2>/dev/null) $(tail -n 3 "$work/bench.err")"
fi

api GET "$secret_path"
cp "$work/body.json" "$work/secret-last.json"
first_issuer="$(jq -r '.data["issuer.crt"]' "$work/secret-first.json" | base64 -d | fingerprint)"
last_bundle="$(jq -r '.data["ca.crt"]' "$work/secret-last.json" | base64 -d)"
last_issuer="$(jq -r '.data["issuer.crt"]' "$work/secret-last.json" | base64 -d | fingerprint)"
first_in_last=no
printf '%s\n' "$last_bundle" | awk '/BEGIN/{n++} {print > ("'"$work"'/last-ca-" n ".pem")}'
for f in "$work"/last-ca-*.pem; do
  [ "$(fingerprint < "$f")" = "$first_issuer" ] && first_in_last=yes
done
logs="$(cat "$work"/celer-a.log "$work"/celer-b.log)"
staged="$(grep -c 'certificate Secret written.*StageCa' <<< "$logs")"
promoted="$(grep -c 'certificate Secret written.*PromoteCa' <<< "$logs")"
dropped="$(grep -c 'certificate Secret written.*DropExpired' <<< "$logs")"
renewed="$(grep -c 'certificate Secret written.*RenewServing' <<< "$logs")"
writes="$(grep -c 'certificate Secret written' <<< "$logs")"
lost="$(grep -c 'wrote the certificate Secret first' <<< "$logs")"
if [ "$last_issuer" != "$first_issuer" ] && [ "$first_in_last" = no ] && [ "$staged" -ge 1 ] && [ "$promoted" -ge 1 ] && [ "$dropped" -ge 1 ]; then
  ok "S4 a full CA rotation: $staged staged, $promoted promoted, $dropped expired CA dropped; $renewed serving renewals; $writes writes in all, $lost conflicts read again"
else
  bad "S4 a full CA rotation" "issuer changed: $([ "$last_issuer" != "$first_issuer" ] && echo yes || echo no), first CA still in ca.crt: $first_in_last, staged $staged, promoted $promoted, dropped $dropped"
fi

samples=0 unverified=0
for name in a b; do
  n="$(awk -F'\t' -v r="$name" '$2 == r' "$work/samples.tsv" | wc -l)"
  gens="$(awk -F'\t' -v r="$name" '$2 == r {print $5}' "$work/samples.tsv" | sort -u | wc -l)"
  certs="$(awk -F'\t' -v r="$name" '$2 == r {print $3}' "$work/samples.tsv" | sort -u | wc -l)"
  eval "gens_$name=$gens; certs_$name=$certs"
  samples=$((samples + n))
done
unverified="$(awk -F'\t' '$4 != "yes"' "$work/samples.tsv" | wc -l)"
if [ "$gens_a" -ge 2 ] && [ "$gens_b" -ge 2 ] && [ "$unverified" = 0 ] && [ "$samples" -gt 0 ]; then
  ok "S5 each replica served both CA generations (a: $gens_a CAs, $certs_a certificates; b: $gens_b CAs, $certs_b certificates); all $samples samples verified against the caBundle registered then"
else
  bad "S5 both generations served, always trusted" "a: $gens_a CAs, b: $gens_b CAs, $unverified of $samples samples not verified: $(awk -F'\t' '$4 != "yes"' "$work/samples.tsv" | head -n 3 | tr '\t\n' ' ;')"
fi

metric() { # metric NAME REPLICA
  local mport
  eval "mport=\$mport_$2"
  curl -fsS "http://127.0.0.1:$mport/metrics" 2>/dev/null | awk -v m="$1" '$1 == m {print $2}'
}
now=$(date +%s)
metrics_ok=true
for name in a b; do
  not_after="$(metric celer_tls_certificate_not_after_seconds "$name")"
  rotations="$(metric celer_tls_certificate_rotations_total "$name")"
  if [ -z "$not_after" ] || [ "$not_after" -le "$now" ] || [ "$not_after" -gt $((now + 41)) ] || [ "${rotations:-0}" -lt 3 ]; then
    metrics_ok=false
  fi
  eval "rot_$name=${rotations:-0}"
done
if $metrics_ok; then
  ok "S6 /metrics: notAfter within the next 40 s on both; swaps a: $rot_a, b: $rot_b"
else
  bad "S6 /metrics" "a: $(metric celer_tls_certificate_not_after_seconds a) $rot_a; b: $(metric celer_tls_certificate_not_after_seconds b) $rot_b; now $now"
fi

echo "--- the Secret deleted under both replicas"
creates_before="$(cat "$work"/celer-*.log | grep -c 'certificate Secret written.*Create')"
lost_before="$(cat "$work"/celer-*.log | grep -c 'wrote the certificate Secret first')"
api DELETE "$secret_path"
deleted_status="$status"
both_serve_new() {
  api GET "$secret_path"
  [ "$status" = 200 ] || return 1
  local fp
  fp="$(jq -r '.data["tls.crt"]' "$work/body.json" | base64 -d | fingerprint)"
  [ -n "$fp" ] && [ "$fp" != "$last_fp" ] && [ "$(served a | fingerprint)" = "$fp" ] && [ "$(served b | fingerprint)" = "$fp" ]
}
last_fp="$(jq -r '.data["tls.crt"]' "$work/secret-last.json" | base64 -d | fingerprint)"
if wait_for 20 both_serve_new; then
  creates="$(( $(cat "$work"/celer-*.log | grep -c 'certificate Secret written.*Create') - creates_before ))"
  lost="$(( $(cat "$work"/celer-*.log | grep -c 'wrote the certificate Secret first') - lost_before ))"
  if [ "$creates" = 1 ]; then
    ok "S7 the Secret deleted (HTTP $deleted_status): made again once ($lost create refused with 409 and read instead), both replicas serve the new certificate"
  else
    bad "S7 the Secret made again once" "$creates creates, $lost conflicts"
  fi
else
  bad "S7 the Secret made again" "not served by both within 20 s (HTTP $status)"
fi

echo "--- files, as cert-manager mounts them"
mkdir -p "$work/files"
(
  cd "$work/files" || exit 1
  for ca in ca1 ca2; do
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=e2e $ca" -keyout "$ca.key" -out "$ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
  done
  openssl req -newkey rsa:2048 -nodes -subj "/CN=celer" -keyout tls.key -out tls.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > tls.ext
  openssl x509 -req -in tls.csr -CA ca1.crt -CAkey ca1.key -CAcreateserial -days 1 -extfile tls.ext -out tls.crt 2>/dev/null
  cp ca1.crt ca.crt
)
port_c="$(free_port)"; mport_c="$(free_port)"
setsid "$CELER_BIN" serve --listen "127.0.0.1:$port_c" --metrics-listen "127.0.0.1:$mport_c" \
  --kubeconfig "$CELER_E2E_WEBHOOK_KUBECONFIG" --register-webhooks --webhook-name celer-c \
  --webhook-failure-policy Ignore --tls-cert "$work/files/tls.crt" --tls-key "$work/files/tls.key" \
  --webhook-ca-bundle "$work/files/ca.crt" --log-level info > "$work/celer-c.log" 2>&1 < /dev/null &
pids+=($!)
disown "$!"
if wait_for 60 ready c && [ "$(bundle_of c)" = "$(cat "$work/files/ca1.crt")" ]; then
  cat "$work/files/ca1.crt" "$work/files/ca2.crt" > "$work/files/ca.crt.new"
  mv "$work/files/ca.crt.new" "$work/files/ca.crt"
  changed_at=$(date +%s)
  if wait_for 15 eval '[ "$(bundle_of c)" = "$(cat "$work/files/ca.crt")" ]'; then
    ok "S8 --webhook-ca-bundle registered, and again $(( $(date +%s) - changed_at ))s after the file changed (one CA, then two)"
  else
    bad "S8 --webhook-ca-bundle followed" "the configuration still has $(bundle_of c | grep -c BEGIN) CA(s) 15 s after the file got two"
  fi
else
  bad "S8 --webhook-ca-bundle registered" "not ready, or the caBundle is not the file's: $(tail -n 3 "$work/celer-c.log")"
fi

echo "certs: $pass passed, $fail failed in $(( $(date +%s) - started ))s (the Secret was ready $(( secret_ready - started ))s in)"
[ "$fail" = 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
