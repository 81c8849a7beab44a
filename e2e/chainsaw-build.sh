#!/usr/bin/env bash
# Builds Kyverno's chainsaw (the test runner of Kyverno's conformance suite) from its Go module
# with the machine's Go toolchain, once, into the e2e cache:
#   ${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}/chainsaw-<version>-<key>/bin/chainsaw
# where <key> hashes the version, this script and `go version`. Prints the binary's path on
# stdout; progress goes to stderr. A first build takes minutes (under nice).
#
#   e2e/chainsaw-build.sh     [CELER_CHAINSAW_VERSION, default v0.2.12]
#
# chainsaw v0.2.12 hands testing.MainStart its own testDeps, which lacks the ModulePath method
# Go 1.25 added to that interface; with a newer Go the module's source is copied beside the
# binary and the one missing method added in a file of its own (nothing of chainsaw changed).
set -euo pipefail
version="${CELER_CHAINSAW_VERSION:-v0.2.12}"
module=github.com/kyverno/chainsaw
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go) is not on PATH; chainsaw is built from source" >&2
  exit 1
fi
key="$( { echo "$version"; cat "${BASH_SOURCE[0]}"; go version; } | sha256sum | cut -c1-12)"
cache_root="${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}"
dir="$cache_root/chainsaw-${version}-${key}"
if [ -x "$dir/bin/chainsaw" ]; then
  echo "$dir/bin/chainsaw"
  exit 0
fi
echo "e2e/chainsaw-build.sh: building chainsaw $version into $dir (minutes)" >&2
started=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/bin"
src="$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "$module@$version" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$src" "$dir/src"
chmod -R u+w "$dir/src"
cat > "$dir/src/pkg/runner/internal/zz_celer_module_path.go" <<'GO'
package internal

// ModulePath is required of testing's deps by Go 1.25 and later (added for celer's e2e build).
func (*TestDeps) ModulePath() string { return "" }
GO
(cd "$dir/src" && nice -n 10 go build -trimpath \
  -ldflags "-X $module/pkg/version.BuildVersion=$version" -o "$dir/bin/chainsaw" .)
rm -rf "$dir/src"
# Older builds of this or another version are left to the operator (they are 180 MB each).
echo "e2e/chainsaw-build.sh: built in $(( $(date +%s) - started ))s" >&2
echo "$dir/bin/chainsaw"
