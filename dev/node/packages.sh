#!/usr/bin/env bash
# Installs the Debian packages the local node (dev/node) runs, when they are missing:
#   containerd                   - the container runtime kubelet talks to (started by dev/node with its own config)
#   runc                         - the OCI runtime containerd starts containers with
#   containernetworking-plugins  - the CNI bridge, host-local and loopback plugins for pod networking
#   iptables, iproute2, conntrack - kube-proxy's rules, the node bridge and routes
#   prometheus                   - promtool, which unit-tests the chart's PrometheusRule
# Runs apt-get only when something is missing, so repeated runs cost nothing.
set -euo pipefail
missing=()
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "missing Debian packages: ${missing[*]}; install them with: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d: Debian's maintainer scripts would start the system's containerd/prometheus; the node runs its own.
policy=/usr/sbin/policy-rc.d
created_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  created_policy=1
fi
trap '[ -n "$created_policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
