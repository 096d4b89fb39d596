#!/usr/bin/env bash
# Builds kine (an etcd API over SQL databases) from the Go module proxy into a cache outside the
# repository, keyed by the module's pinned version. Prints the path of the binary. Only the first
# build is slow. Used only by the kine/Postgres benchmark (BENCH_STORAGE=kine-postgres), never by CI.
set -euo pipefail
[ -d /usr/local/go/bin ] && case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="$PATH:/usr/local/go/bin" ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1=="github.com/k3s-io/kine" {print $2; exit}' "$here/go.mod")"
key="$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -c1-12)"
cache_root="${LATCHKEY_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/controlplane}"
out="$cache_root/kine-$version-$key"
if [ -x "$out/kine" ]; then
  echo "$out/kine"
  exit 0
fi
command -v go >/dev/null 2>&1 || {
  echo "Go is needed to build kine. Install Go 1.26." >&2
  exit 1
}
mkdir -p "$cache_root"
exec 9>"$cache_root/.kine-build.lock"
flock 9
if [ -x "$out/kine" ]; then
  echo "$out/kine"
  exit 0
fi
mkdir -p "$out.tmp"
echo "building kine $version (first run only; a few minutes)..." >&2
cd "$here"
# Pure Go (kine's SQLite driver is modernc.org/sqlite): no C toolchain needed.
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out.tmp/kine" github.com/k3s-io/kine >&2
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out/kine"
