#!/usr/bin/env bash
# Builds helm from its Go module with the machine's Go toolchain, once, into the e2e cache:
#   ${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}/helm-<version>-<key>/bin/helm
# where <key> hashes the version and `go version`. Prints the binary's path on stdout; progress
# goes to stderr. A first build takes a few minutes (under nice).
#
#   e2e/helm-build.sh     [CELER_HELM_VERSION, default v4.3.2]
set -euo pipefail
version="${CELER_HELM_VERSION:-v4.3.2}"
module=helm.sh/helm/v4
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go) is not on PATH; helm is built from source" >&2
  exit 1
fi
key="$( { echo "$module@$version"; go version; } | sha256sum | cut -c1-12)"
cache_root="${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}"
dir="$cache_root/helm-${version}-${key}"
if [ -x "$dir/bin/helm" ]; then
  echo "$dir/bin/helm"
  exit 0
fi
echo "e2e/helm-build.sh: building helm $version into $dir (minutes)" >&2
started=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/bin"
# `go install module/cmd@version` builds with the module's own go.mod, outside any workspace;
# the version helm prints comes from the same link flag its release builds set.
(cd /tmp && GOFLAGS=-mod=mod GOBIN="$dir/bin.tmp" nice -n 10 go install -trimpath \
  -ldflags "-X $module/internal/version.version=$version" "$module/cmd/helm@$version")
mv "$dir/bin.tmp/helm" "$dir/bin/helm"
rmdir "$dir/bin.tmp"
echo "e2e/helm-build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$dir/bin/helm"
