#!/usr/bin/env bash
# Builds kubelet, kube-scheduler and kube-proxy from the Go module proxy (the same k8s.io/kubernetes
# version as the local control plane, pinned by dev/node/go.mod), and the pause binary of the pod
# sandbox image from that module's build/pause/linux/pause.c (static, for a FROM scratch image),
# into a cache outside the repository keyed by the pinned versions. Prints the directory holding
# them. Only the first build is slow (about 9 minutes on 2 cores with a cold Go cache).
set -euo pipefail
[ -d /usr/local/go/bin ] && case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="$PATH:/usr/local/go/bin" ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
k8s_version="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$here/go.mod")"
key="$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -c1-12)"
cache_root="${LATCHKEY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/node}"
out="$cache_root/$k8s_version-$key"
built() { [ -x "$out/kubelet" ] && [ -x "$out/kube-scheduler" ] && [ -x "$out/kube-proxy" ] && [ -x "$out/pause" ]; }
if built; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "Go is needed to build the local node (kubelet, kube-scheduler, kube-proxy). Install Go 1.26." >&2; exit 1; }
command -v cc >/dev/null 2>&1 || { echo "a C compiler is needed to build the pause binary: apt-get install -y gcc libc6-dev" >&2; exit 1; }
mkdir -p "$cache_root"
# One build at a time; the others wait and reuse it.
exec 9>"$cache_root/.build.lock"
flock 9
if built; then
  echo "$out"
  exit 0
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
echo "building kubelet, kube-scheduler and kube-proxy $k8s_version (first run only; several minutes)..." >&2
cd "$here"
minor="$(echo "$k8s_version" | cut -d. -f2)"
version_pkg=k8s.io/component-base/version
stamp="-X $version_pkg.gitVersion=$k8s_version -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
go build -trimpath -ldflags="-s -w $stamp" -o "$out.tmp/" \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy >&2
module_dir="$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
cc -Os -static -Wall -Werror -DVERSION="\"$k8s_version-latchkey\"" -o "$out.tmp/pause" "$module_dir/build/pause/linux/pause.c" >&2
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
