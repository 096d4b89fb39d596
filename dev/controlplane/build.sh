#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager from the Go module proxy
# into a cache outside the repository, keyed by the module's pinned versions.
# Prints the directory holding the binaries. Only the first build is slow.
set -euo pipefail
# Go lives in /usr/local/go on the machines this runs on, even when a login shell did not put it on PATH.
[ -d /usr/local/go/bin ] && case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="$PATH:/usr/local/go/bin" ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
k8s_version="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$here/go.mod")"
key="$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -c1-12)"
cache_root="${LATCHKEY_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/controlplane}"
out="$cache_root/$k8s_version-$key"
if [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] && [ -x "$out/etcd" ]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "Go is needed to build the local control plane (kube-apiserver, etcd). Install Go 1.26 or set LATCHKEY_KUBECONFIG to an existing cluster." >&2
  exit 1
}
mkdir -p "$cache_root"
# One build at a time (parallel test runs share the cache); the others wait and reuse it.
exec 9>"$cache_root/.build.lock"
flock 9
if [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] && [ -x "$out/etcd" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$out.tmp"
echo "building kube-apiserver, kube-controller-manager and etcd $k8s_version (first run only; several minutes)..." >&2
cd "$here"
# Stamp the version the way Kubernetes' own build does, so clients (helm's kubeVersion checks) see v1.36.x, not v0.0.0.
minor="$(echo "$k8s_version" | cut -d. -f2)"
version_pkg=k8s.io/component-base/version
stamp="-X $version_pkg.gitVersion=$k8s_version -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
go build -trimpath -ldflags="-s -w $stamp" -o "$out.tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager >&2
go build -trimpath -ldflags='-s -w' -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
