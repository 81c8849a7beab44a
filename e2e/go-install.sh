#!/usr/bin/env bash
# Builds one command of a Go module with the machine's Go toolchain, once, into the e2e cache:
#   ${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}/<name>-<version>-<key>/bin/<name>
# where <key> hashes the package, the version, the link flags and `go version`. Prints the
# binary's path on stdout; progress goes to stderr. `go install package@version` builds with
# the module's own go.mod, outside any workspace, under nice.
#
#   e2e/go-install.sh NAME PACKAGE VERSION [LDFLAGS]
#   e2e/go-install.sh registry github.com/google/go-containerregistry/cmd/registry v0.22.1
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 NAME PACKAGE VERSION [LDFLAGS]" >&2
  exit 2
fi
name="$1" package="$2" version="$3" ldflags="${4:-}"
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go) is not on PATH; $name is built from source" >&2
  exit 1
fi
key="$( { echo "$package@$version $ldflags"; go version; } | sha256sum | cut -c1-12)"
cache_root="${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}"
dir="$cache_root/${name}-${version}-${key}"
if [ -x "$dir/bin/$name" ]; then
  echo "$dir/bin/$name"
  exit 0
fi
echo "e2e/go-install.sh: building $name ($package@$version) into $dir" >&2
started=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/bin"
(cd /tmp && GOFLAGS=-mod=mod GOBIN="$dir/bin.tmp" nice -n 10 go install -trimpath \
  -ldflags "$ldflags" "$package@$version")
mv "$dir/bin.tmp/$(basename "$package")" "$dir/bin/$name"
rmdir "$dir/bin.tmp"
echo "e2e/go-install.sh: built $name in $(( $(date +%s) - started ))s" >&2
echo "$dir/bin/$name"
