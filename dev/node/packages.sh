#!/usr/bin/env bash
# Installs the Debian packages the local node (dev/node) runs, when they are missing:
#   containerd                   - the container runtime kubelet talks to (started by dev/node with its own config)
#   runc                         - the OCI runtime containerd starts containers with
#   containernetworking-plugins  - the CNI bridge, host-local and loopback plugins for pod networking
#   iptables, iproute2, conntrack - kube-proxy's rules, the node bridge and routes
#   prometheus                   - promtool, which unit-tests the chart's PrometheusRule
# Runs apt-get only when something is missing, so repeated runs cost nothing.
set -euo pipefail
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh"
missing=()
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
apt_install_missing --no-services "${missing[@]}"
