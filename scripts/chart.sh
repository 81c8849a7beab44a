#!/usr/bin/env bash
# The Helm chart's generated parts and its offline checks.
#
#   scripts/chart.sh crds     write charts/celer/files/crds/<group>.yaml from `celer crds`
#   scripts/chart.sh manifests  write deploy/manifests/ (crds.yaml, celer.yaml) from the chart's
#                             default values, for kubectl users
#   scripts/chart.sh check    the CRD files and the plain manifests are current, the chart's version is the binary's,
#                             `helm lint` and `helm template` pass for the default values and
#                             for charts/celer/ci/*.yaml, and the rendered Pods meet celer's
#                             own Pod Security restricted set with no warning
#
# CELER_BIN names the celer binary (default: target/debug/celer, built if missing); helm comes
# from e2e/helm-build.sh (built from its Go module once, into the e2e cache). The checks that
# need an API server (server-side dry-run, install, uninstall) are in e2e/chart.sh.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
chart=charts/celer
groups=(policies.kyverno.io kyverno.io templates.gatekeeper.sh config.gatekeeper.sh
  syncset.gatekeeper.sh externaldata.gatekeeper.sh mutations.gatekeeper.sh
  authorization.celer.dev openreports.io wgpolicyk8s.io)

# Built every time unless CELER_BIN names one: a binary left from an older commit would write
# yesterday's CRDs (cargo does nothing when it is current).
celer="${CELER_BIN:-$repo/target/debug/celer}"
if [ -z "${CELER_BIN:-}" ]; then
  cargo build --locked -p celer >&2
fi

crds_into() {
  local dir="$1"
  mkdir -p "$dir"
  for g in "${groups[@]}"; do
    "$celer" crds --group "$g" > "$dir/$g.yaml"
  done
}

# The plain manifests: the default values in the namespace celer-system, the CRDs apart, no
# token Secret (a rendered secret would be the same for everyone: docs/install.md makes it).
manifests_into() {
  local dir="$1" helm
  helm="$(bash e2e/helm-build.sh)"
  mkdir -p "$dir"
  { echo "# celer's CRDs, rendered from charts/celer by scripts/chart.sh manifests (docs/install.md)."
    "$helm" template celer "$chart" --namespace celer-system --show-only templates/crds.yaml; } > "$dir/crds.yaml"
  { echo "# celer in the namespace celer-system, rendered from charts/celer's default values by"
    echo "# scripts/chart.sh manifests; apply crds.yaml first, and make the token Secret (docs/install.md)."
    "$helm" template celer "$chart" --namespace celer-system --set crds.install=false \
      --set controller.admissionReportsToken.create=false; } > "$dir/celer.yaml"
}

case "${1:-}" in
  manifests)
    manifests_into deploy/manifests
    echo "wrote deploy/manifests/crds.yaml and celer.yaml"
    ;;
  crds)
    crds_into "$chart/files/crds"
    echo "wrote $chart/files/crds/ (${#groups[@]} groups)"
    ;;
  check)
    fail=0
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    crds_into "$tmp/crds"
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: celer-system\n  labels:\n    kubernetes.io/metadata.name: celer-system\n' > "$tmp/namespace.yaml"
    if ! diff -r -q "$tmp/crds" "$chart/files/crds" >/dev/null; then
      diff -r "$tmp/crds" "$chart/files/crds" | head -20 >&2
      echo "FAIL the chart's CRDs differ from \`celer crds\`: run scripts/chart.sh crds" >&2
      fail=1
    fi
    manifests_into "$tmp/manifests"
    for f in crds.yaml celer.yaml; do
      if ! cmp -s "$tmp/manifests/$f" "deploy/manifests/$f"; then
        echo "FAIL deploy/manifests/$f differs from the chart's rendering: run scripts/chart.sh manifests" >&2
        fail=1
      fi
    done
    cargo_version="$(awk -F'"' '/^version = / {print $2; exit}' Cargo.toml)"
    for key in version appVersion; do
      v="$(awk -v k="$key:" '$1 == k {gsub(/"/, "", $2); print $2}' "$chart/Chart.yaml")"
      if [ "$v" != "$cargo_version" ]; then
        echo "FAIL $chart/Chart.yaml $key is $v, the binary is $cargo_version" >&2
        fail=1
      fi
    done
    helm="$(bash e2e/helm-build.sh)"
    "$helm" lint --strict "$chart"
    values=("")
    for f in "$chart"/ci/*.yaml; do values+=("$f"); done
    for v in "${values[@]}"; do
      label="${v:-default values}"
      args=()
      [ -n "$v" ] && args=(-f "$v")
      "$helm" lint --strict "$chart" "${args[@]}" >/dev/null
      out="$tmp/$(basename "${v:-default}").yaml"
      "$helm" template celer "$chart" --namespace celer-system "${args[@]}" > "$out"
      objects="$(grep -c '^kind: ' "$out")"
      # Each Pod template, as a Pod in the release's namespace, through the restricted set.
      python3 e2e/chart-pods.py "$out" > "$tmp/pods.yaml"
      pods="$(grep -c '^kind: Pod$' "$tmp/pods.yaml")"
      ok=1
      if ! "$celer" apply --policy policies/pod-security --resource "$tmp/pods.yaml" \
        --namespace "$tmp/namespace.yaml" -o json > "$tmp/apply.json" 2>"$tmp/apply.err"; then
        echo "FAIL $label: the rendered Pods do not pass Pod Security restricted:" >&2
        python3 -c 'import json,sys; [print("  ", r["resource"]["name"], r["status"]["message"]) for r in json.load(open(sys.argv[1]))["resources"] if not r["allowed"]]' "$tmp/apply.json" >&2
        ok=0
      fi
      warnings="$(python3 -c 'import json,sys; print(sum(len(r["warnings"]) for r in json.load(open(sys.argv[1]))["resources"]))' "$tmp/apply.json")"
      if [ "$warnings" != 0 ]; then
        echo "FAIL $label: $warnings Pod Security warnings on the rendered Pods" >&2
        ok=0
      fi
      [ "$ok" = 1 ] || { fail=1; continue; }
      echo "ok $label: $objects objects rendered, $pods Pod templates pass Pod Security restricted with no warning"
    done
    exit "$fail"
    ;;
  *)
    sed -n '2,12p' "$0" >&2
    exit 2
    ;;
esac
