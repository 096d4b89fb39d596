#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real, when they are missing:
#   chromium         - the browser playwright-core drives through the Connect UI
#   python3-oauthlib - the OAuth 1.0a provider the OAuth 1 tests run against (with Debian's python3)
#   openssl          - a certificate for a host name (the egress guard's TLS test)
#   podman, runc     - build and run the container image (npm run image, test/image)
# Runs apt-get only when something is missing, so repeated runs cost nothing.
set -euo pipefail
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../../dev/apt-install.sh"
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
if ! /usr/bin/python3 -c 'import oauthlib.oauth1' >/dev/null 2>&1; then missing+=(python3-oauthlib); fi
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
apt_install_missing "${missing[@]}"
