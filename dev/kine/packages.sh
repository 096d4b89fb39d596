#!/usr/bin/env bash
# Installs the Debian package the kine/Postgres benchmark (BENCH_STORAGE=kine-postgres) runs, when missing:
#   postgresql - the server kine stores the API server's objects in (a throwaway cluster, dev/kine-postgres.ts)
# Not part of CI's setup: nothing but that benchmark needs it. Runs apt-get only when something is missing.
set -euo pipefail
missing=()
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "missing Debian packages: ${missing[*]}; install them with: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d: Debian's maintainer scripts would start the system's Postgres cluster; the benchmark runs its own.
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  created_policy=1
fi
trap '[ -n "$created_policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
