#!/usr/bin/env bash
# Kyverno's context-backed test suites through the cluster path (issue 20): the `test-context-*`
# CLI suites of kyverno/test/cli and the kyverno-policies suites that carry a `context` file,
# each with the objects its mocks stand for applied to the e2e kube-apiserver and run by
# `celer test --kubeconfig`, so that `resource.*` reads them through celer's watch caches and
# live reads rather than from mocks (e2e/context-suites.py). Suites whose mocks stand for
# something outside the cluster (public images, external HTTP answers) are skipped with the
# reason. The run fails when a check fails or the passing count falls below
# e2e/context-suites.ratchet, and says so when it rises above it.
#
#   e2e/context-suites.sh
#
# Environment: CELER_BIN (default: `cargo build -p celer`, target/debug/celer),
# CELER_CORPUS (default: ../shared/corpus beside the repository), CELER_E2E_KEEP=1, and the
# settings of e2e/control-plane.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
work="${CELER_E2E_WORK:-$repo/target/e2e/context-suites}"
export CELER_E2E_DIR="${CELER_E2E_DIR:-$repo/target/e2e/control-plane}"
export CELER_CORPUS="${CELER_CORPUS:-$repo/../shared/corpus}"
rm -rf "$work"
mkdir -p "$work"

cleanup() {
  if [ "${CELER_E2E_KEEP:-}" != 1 ]; then
    "$here/control-plane.sh" down
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

suites=()
while IFS= read -r f; do suites+=("$f"); done < <(
  {
    ls -d "$CELER_CORPUS"/kyverno/test/cli/test-context-*/kyverno-test.yaml 2>/dev/null
    grep -rl --include=kyverno-test.yaml '^context:' "$CELER_CORPUS/kyverno-policies" 2>/dev/null
  } | sort
)
if [ "${#suites[@]}" -eq 0 ]; then
  echo "FAIL corpus: no context suites under $CELER_CORPUS"
  exit 1
fi

echo "--- build"
if [ -z "${CELER_BIN:-}" ]; then
  cargo build -p celer --locked --quiet || { echo "FAIL build: cargo build -p celer"; exit 1; }
  CELER_BIN="$repo/target/debug/celer"
fi

echo "--- control plane"
if ! "$here/control-plane.sh" up > "$work/env.sh"; then
  echo "FAIL control-plane: did not start (see above)"
  exit 1
fi
# shellcheck disable=SC1091
source "$work/env.sh"

echo "--- ${#suites[@]} suites"
python3 "$here/context-suites.py" "$CELER_BIN" "$KUBECONFIG" "${suites[@]}" | tee "$work/out.txt"
summary="$(grep '^context-suites:' "$work/out.txt")"
passed="$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$summary")"
failed="$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$summary")"
floor="$(awk -F'\t' '$1 == "passed" {print $2}' "$here/context-suites.ratchet")"
if [ -z "$passed" ]; then
  echo "FAIL context-suites: no summary"
  exit 1
fi
status=0
if [ "$failed" != 0 ]; then
  echo "FAIL context-suites: $failed checks failed"
  status=1
fi
if [ "$passed" -lt "$floor" ]; then
  echo "FAIL context-suites: $passed passed, below the ratchet ($floor)"
  status=1
elif [ "$passed" -gt "$floor" ]; then
  echo "note: $passed passed, above the ratchet ($floor): raise e2e/context-suites.ratchet"
fi
exit "$status"
