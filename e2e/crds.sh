#!/usr/bin/env bash
# celer's CRDs on a real kube-apiserver (e2e/control-plane.sh): `celer crds` installed, each
# CRD Established, then every policy manifest of the corpus's Kyverno CEL folders (`*-vpol`,
# `*-mpol`, `*-cel`), every gatekeeper-library template and the policies of Kyverno's CLI test
# suites (`kyverno/test/cli`) server-side applied with strict field validation (e2e/crds-apply.py). Each refusal is printed with the API server's reason;
# the summary line is `crds: N accepted, M refused`. The run fails when the accepted count
# falls below e2e/crds.ratchet, and says so when it rises above it. No webhook is involved.
#
#   e2e/crds.sh
#
# Environment: CELER_BIN (default: `cargo build -p celer`, target/debug/celer),
# CELER_CORPUS (default: ../shared/corpus beside the repository), CELER_E2E_KEEP=1, and the
# settings of e2e/control-plane.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/crds}"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
corpus="${CELER_CORPUS:-$repo/../shared/corpus}"
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=e2e/lib.sh
source "$here/lib.sh"

cleanup() {
  if [ "${CELER_E2E_KEEP:-}" != 1 ]; then
    "$here/control-plane.sh" down
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -d "$corpus/kyverno-policies" ] || [ ! -d "$corpus/gatekeeper-library/library" ]; then
  echo "FAIL corpus: kyverno-policies or gatekeeper-library missing under $corpus"
  exit 1
fi

echo "--- build"
if [ -z "${CELER_BIN:-}" ]; then
  cargo build -p celer --locked --quiet || { echo "FAIL build: cargo build -p celer"; exit 1; }
  CELER_BIN="$repo/target/debug/celer"
fi
"$CELER_BIN" crds --output json > "$work/crds.json" || { echo "FAIL celer crds"; exit 1; }

echo "--- control plane"
if ! "$here/control-plane.sh" up > "$work/env.sh"; then
  echo "FAIL control-plane: did not start (see above)"
  exit 1
fi
# shellcheck disable=SC1091
source "$work/env.sh"

echo "--- install the CRDs"
crd_path=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
names=()
while IFS= read -r crd; do
  name="$(jq -r '.metadata.name' <<<"$crd")"
  api POST "$crd_path" "$crd"
  if [ "$status" != 201 ]; then
    echo "FAIL install $name: HTTP $status: $(message | head -c 600)"
    exit 1
  fi
  names+=("$name")
done < <(jq -c '.items[]' "$work/crds.json")

established() {
  api GET "$crd_path/$1"
  [ "$status" = 200 ] && jq -e '.status.conditions[]? | select(.type == "Established" and .status == "True")' \
    "$work/body.json" >/dev/null
}
for name in "${names[@]}"; do
  deadline=$(( $(date +%s) + 60 ))
  until established "$name"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "FAIL established $name: not Established in 60 s: $(jq -c '.status.conditions' "$work/body.json")"
      exit 1
    fi
    sleep 0.25
  done
  echo "PASS established $name"
done

echo "--- strictness: a misspelt field is refused, not pruned"
typo() {
  api POST "$1?fieldValidation=Strict" "$2"
  if [ "$status" = 400 ] && message | grep -qF "unknown field \"$3\""; then
    echo "PASS refused $3"
  else
    echo "FAIL refused $3: want HTTP 400 unknown field, got HTTP $status: $(message | head -c 300)"
    exit 1
  fi
}
typo /apis/policies.kyverno.io/v1/validatingpolicies \
  '{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"typo"},"spec":{"validationz":[]}}' \
  spec.validationz
typo /apis/kyverno.io/v1/clusterpolicies \
  '{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"typo"},"spec":{"rules":[{"name":"r","match":{},"validate":{"cell":{}}}]}}' \
  'spec.rules[0].validate.cell'
typo /apis/templates.gatekeeper.sh/v1/constrainttemplates \
  '{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"typo"},"spec":{"target":[]}}' \
  spec.target

echo "--- apply the corpus (server-side, strict field validation)"
args=()
for dir in "$corpus"/kyverno-policies/*-vpol "$corpus"/kyverno-policies/*-mpol "$corpus"/kyverno-policies/*-cel; do
  args+=("${dir##*-}=$dir")
done
while IFS= read -r template; do
  args+=("gatekeeper=$template")
done < <(find "$corpus/gatekeeper-library/library" -name template.yaml | sort)
# Kyverno's CLI suites: the kinds the library folders lack (PolicyException, Policy, v1beta1
# manifests) and classic ClusterPolicies beyond validate.cel.
args+=("kyverno-cli=$corpus/kyverno/test/cli")
"$here/crds-apply.py" "$work/crds.json" "${args[@]}" | tee "$work/apply.log"
summary="$(grep '^crds: ' "$work/apply.log")"
accepted="$(sed -E 's/^crds: ([0-9]+) accepted.*/\1/' <<<"$summary")"
[ -n "$accepted" ] || { echo "FAIL apply: no summary"; exit 1; }

ratchet="$(awk '$1 == "accepted" {print $2}' "$here/crds.ratchet")"
if [ "$accepted" -lt "$ratchet" ]; then
  echo "FAIL ratchet: $accepted accepted, fewer than the $ratchet of e2e/crds.ratchet"
  exit 1
fi
if [ "$accepted" -gt "$ratchet" ]; then
  echo "note: $accepted accepted, more than the $ratchet of e2e/crds.ratchet: raise it"
fi
echo "PASS ratchet: $accepted accepted (e2e/crds.ratchet: $ratchet)"

# What `kubectl get` shows: short names in discovery, the printer columns in a Table.
api GET /apis/policies.kyverno.io/v1
if jq -e '.resources[] | select(.name == "validatingpolicies") | .shortNames | index("vpol")' \
    "$work/body.json" >/dev/null; then
  echo "PASS short name vpol"
else
  echo "FAIL short name vpol: not in discovery: $(head -c 300 "$work/body.json")"
  exit 1
fi
columns="$(curl -sS --cacert "$CELER_E2E_CA" -H "Authorization: Bearer $CELER_E2E_TOKEN" \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
  "$CELER_E2E_SERVER/apis/kyverno.io/v1/clusterpolicies?limit=1" | jq -r '[.columnDefinitions[].name] | join(",")')"
want="Name,ADMISSION,BACKGROUND,READY,AGE,FAILURE POLICY,VALIDATE,MUTATE,GENERATE,VERIFY IMAGES,MESSAGE"
if [ "$columns" = "$want" ]; then
  echo "PASS ClusterPolicy columns"
else
  echo "FAIL ClusterPolicy columns: want $want, got $columns"
  exit 1
fi

# Every served version reads what was stored (the shapes are the same: no conversion).
for version in v1alpha1 v1beta1 v1; do
  api GET "/apis/policies.kyverno.io/$version/validatingpolicies"
  if [ "$status" = 200 ] && [ "$(jq '.items | length' "$work/body.json")" -gt 0 ]; then
    echo "PASS read ValidatingPolicies as $version"
  else
    echo "FAIL read ValidatingPolicies as $version: HTTP $status: $(message | head -c 300)"
    exit 1
  fi
done
