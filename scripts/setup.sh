#!/usr/bin/env bash
# Installs what building and testing celer needs: the pinned Rust toolchain with rustfmt and
# clippy (from rust-toolchain.toml), and cargo-deny (the dependency checks of .ci/run, built
# from its crate the first time: a few minutes). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "error: cargo not found; install rustup (https://rustup.rs) first" >&2
    exit 1
  fi
fi
# rustup reads rust-toolchain.toml and installs the pinned channel and components on first use.
rustup show active-toolchain >/dev/null
cargo --version

# cargo deny: licenses, duplicate versions and sources (deny.toml). Pinned; built once.
deny_version="0.20.2"
if ! cargo deny --version 2>/dev/null | grep -qx "cargo-deny $deny_version"; then
  echo "installing cargo-deny $deny_version (from its crate; a few minutes)"
  cargo install --locked --quiet cargo-deny --version "$deny_version"
fi
cargo deny --version
