#!/usr/bin/env bash
# Installs the Debian package the kine/Postgres benchmark (BENCH_STORAGE=kine-postgres) runs, when missing:
#   postgresql - the server kine stores the API server's objects in (a throwaway cluster, dev/kine-postgres.ts)
# Not part of CI's setup: nothing but that benchmark needs it. Runs apt-get only when something is missing.
set -euo pipefail
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh"
missing=()
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
apt_install_missing --no-services "${missing[@]}"
