#!/usr/bin/env bash
# Installs what the end-to-end tests (e2e/run.sh) need besides Rust: Go (to build kube-apiserver
# and etcd from their modules), openssl (certificates), jq, curl, and Python 3 with PyYAML
# (e2e/apply.py). Installs only what is missing; safe to run again.
set -euo pipefail

missing=()
for tool in openssl jq curl python3; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} with apt-get"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq "${missing[@]}"
  else
    echo "error: missing ${missing[*]}; install them with your package manager" >&2
    exit 1
  fi
fi
if ! python3 -c 'import yaml' >/dev/null 2>&1; then
  echo "installing PyYAML with pip"
  python3 -m pip install --quiet --user pyyaml
fi
if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is needed to build kube-apiserver and etcd for the end-to-end tests (https://go.dev/dl/)" >&2
  exit 1
fi
go version
