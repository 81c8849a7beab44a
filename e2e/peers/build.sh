#!/usr/bin/env bash
# Builds the peer engines of issue 15 from their Go modules, with the machine's Go toolchain,
# into the e2e cache outside the clone (as e2e/build.sh does for kube-apiserver):
#   ${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}/peers-<engine>-<version>-<key>/
# holding bin/<engine> and crds/ (the CRDs shipped in the same module; none for gator). <key>
# hashes the version, the module, the package, RECIPE and `go version`, so a changed pin builds
# anew; bump RECIPE when a change to this script changes what it builds (editing the rest,
# such as adding an engine, rebuilds nothing). Each module is built
# with its own go.mod and go.sum (its replace directives included): the module's source is
# copied from the module cache and built in place; nothing of it enters the repository.
#
#   e2e/peers/build.sh kyverno       # prints the directory; a cold build takes many minutes
#   e2e/peers/build.sh gatekeeper
#   e2e/peers/build.sh gator         # Gatekeeper's CLI (gator bench), from the same module
#
# The pins are in e2e/peers/versions (the newest each module proxy served when set).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
engine="${1:-}"
case "$engine" in
  kyverno) module=github.com/kyverno/kyverno; pkg=./cmd/kyverno; crds=config/crds ;;
  gatekeeper) module=github.com/open-policy-agent/gatekeeper/v3; pkg=.; crds=charts/gatekeeper/crds ;;
  gator) module=github.com/open-policy-agent/gatekeeper/v3; pkg=./cmd/gator; crds= ;;
  *) echo "usage: $0 kyverno|gatekeeper|gator" >&2; exit 2 ;;
esac
RECIPE=1
pin="$engine"
[ "$engine" = gator ] && pin=gatekeeper
version="$(awk -v e="$pin" '$1 == e { print $2 }' "$here/versions")"
if [ -z "$version" ]; then
  echo "error: no pin for $engine in $here/versions" >&2; exit 1
fi
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go) is not on PATH; the peers are built from source" >&2
  exit 1
fi
key="$( { echo "$version $module $pkg $crds $RECIPE"; go version; } | sha256sum | cut -c1-12)"
cache_root="${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}"
dir="$cache_root/peers-${engine}-${version}-${key}"
if [ -x "$dir/bin/$engine" ] && { [ -z "$crds" ] || [ -d "$dir/crds" ]; }; then
  echo "e2e/peers/build.sh: reusing $dir" >&2
  echo "$dir"
  exit 0
fi
echo "e2e/peers/build.sh: building $engine $version into $dir (a cold build takes many minutes)" >&2
started=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/bin"
src="$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "$module@$version" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$src" "$dir/src"
chmod -R u+w "$dir/src"
if [ -n "$crds" ]; then cp -r "$dir/src/$crds" "$dir/crds"; fi
(cd "$dir/src" && nice -n 10 go build -trimpath -o "$dir/bin/$engine.tmp" "$pkg")
mv "$dir/bin/$engine.tmp" "$dir/bin/$engine"
rm -rf "$dir/src"
echo "e2e/peers/build.sh: built $engine in $(( $(date +%s) - started ))s" >&2
echo "$dir"
