#!/usr/bin/env bash
# Builds helm from its Go module, once, into the e2e cache (e2e/go-install.sh). Prints the
# binary's path on stdout; progress goes to stderr. A first build takes a few minutes.
#
#   e2e/helm-build.sh     [CELER_HELM_VERSION, default v4.3.2]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${CELER_HELM_VERSION:-v4.3.2}"
module=helm.sh/helm/v4
# The version helm prints comes from the same link flag its release builds set.
exec "$here/go-install.sh" helm "$module/cmd/helm" "$version" \
  "-X $module/internal/version.version=$version"
