#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from the Go modules pinned in
# e2e/go.mod and go.sum, with the
# machine's Go toolchain, into a cache outside the clone:
#   ${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}/<kubernetes version>-<key>/
# where <key> hashes go.mod, go.sum, the etcd entry point, the link flags and `go version`, so
# a fresh clone reuses binaries built before and a changed pin builds new ones (older builds
# are then removed). Prints the directory holding bin/kube-apiserver and bin/etcd on stdout;
# progress goes to stderr.
#
#   e2e/build.sh            build if needed, print the directory
#   GOFLAGS=-p=1 e2e/build.sh   (go build honours GOFLAGS: fewer compiles at once)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain (go) is not on PATH; the control plane is built from source" >&2
  exit 1
fi

kube_version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' go.mod)"
if [ -z "$kube_version" ]; then
  kube_version="$(grep -Eo 'k8s.io/kubernetes v[0-9.]+' go.mod | head -n1 | cut -d' ' -f2)"
fi
major="${kube_version#v}"; major="${major%%.*}"
minor="${kube_version#v*.}"; minor="${minor%%.*}"
# The version kube-apiserver reports (/version); a plain `go build` would say v0.0.0-master.
ldflags="-X k8s.io/component-base/version.gitVersion=${kube_version}"
ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=${major}"
ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=${minor}"

key="$( { cat go.mod go.sum cmd/etcd/main.go; echo "$ldflags"; go version; } | sha256sum | cut -c1-16)"
cache_root="${CELER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/celer-e2e}"
dir="$cache_root/${kube_version}-${key}"

if [ -x "$dir/bin/kube-apiserver" ] && [ -x "$dir/bin/etcd" ] && [ -x "$dir/bin/kube-controller-manager" ]; then
  echo "e2e/build.sh: reusing $dir" >&2
  echo "$dir"
  exit 0
fi

mkdir -p "$dir/bin"

start=$(date +%s)
# Write to a temporary name and rename, so an interrupted build never leaves a binary that
# looks complete.
echo "e2e/build.sh: building kube-apiserver ${kube_version} into $dir (a cold build takes minutes)" >&2
go build -mod=readonly -ldflags "$ldflags" -o "$dir/bin/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$dir/bin/kube-apiserver.tmp" "$dir/bin/kube-apiserver"
echo "e2e/build.sh: building kube-controller-manager ${kube_version}" >&2
go build -mod=readonly -ldflags "$ldflags" -o "$dir/bin/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager
mv "$dir/bin/kube-controller-manager.tmp" "$dir/bin/kube-controller-manager"
echo "e2e/build.sh: building etcd" >&2
go build -mod=readonly -o "$dir/bin/etcd.tmp" ./cmd/etcd
mv "$dir/bin/etcd.tmp" "$dir/bin/etcd"
echo "e2e/build.sh: built in $(( $(date +%s) - start ))s" >&2
# Builds of other pins are about 190 MB each: keep only this one.
for old in "$cache_root"/v*-*; do
  [ "$old" != "$dir" ] && [ -d "$old/bin" ] && rm -rf "$old"
done
echo "$dir"
