#!/usr/bin/env bash
# Sourced by the scripts that install Debian packages (test/setup/system-packages.sh, dev/node/packages.sh,
# dev/kine/packages.sh): each works out what is missing, then calls
#   apt_install_missing [--no-services] PACKAGE...
# which installs them (as root, or through sudo) and does nothing when given none. --no-services keeps
# Debian's maintainer scripts from starting the packages' system services (a policy-rc.d for the
# install's duration): the project runs its own containerd, Postgres, ...
apt_install_missing() {
  local no_services=""
  if [ "${1:-}" = "--no-services" ]; then
    no_services=1
    shift
  fi
  [ $# -eq 0 ] && return 0
  echo "installing Debian packages: $*" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "missing Debian packages: $*; install them with: apt-get install -y $*" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  local policy=/usr/sbin/policy-rc.d created="" status=0
  if [ -n "$no_services" ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    created=1
  fi
  $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null || status=$?
  if [ -n "$created" ]; then $sudo rm -f "$policy"; fi
  return "$status"
}
