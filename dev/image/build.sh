#!/usr/bin/env bash
# `npm run image`: builds the Dockerfile with podman on this machine (no Docker engine, no registry):
# the base images are made locally (dev/image/base.sh). Prints the image name last.
#   LATCHKEY_IMAGE   the tag to build (default localhost/latchkey:dev); the image is also tagged with
#                    the version (package.json) and with the version and the commit, e.g.
#                    localhost/latchkey:0.2.0 and localhost/latchkey:0.2.0-a11214e (-dirty when the tree is)
# podman here needs runc with explicit resource limits (crun fails on this machine's hybrid
# cgroups; raising the limits is refused), and the host network to reach the npm registry.
set -euo pipefail
root_dir="$(cd "$(dirname "$0")/../.." && pwd)"
image="${LATCHKEY_IMAGE:-localhost/latchkey:dev}"
command -v podman >/dev/null 2>&1 || { echo "podman is needed: apt-get install -y podman runc (test/setup/system-packages.sh does it)" >&2; exit 1; }
read -r build_base runtime_base < <(bash "$root_dir/dev/image/base.sh")
echo "building $image (bases $build_base, $runtime_base)" >&2
podman build "$root_dir" \
  --file "$root_dir/Dockerfile" \
  --tag "$image" \
  --build-arg "BUILD_IMAGE=$build_base" \
  --build-arg "RUNTIME_IMAGE=$runtime_base" \
  --runtime runc \
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
  --network host \
  --layers >&2
repo="${image%:*}"
version=$(node -p "require('$root_dir/package.json').version")
commit=$(git -C "$root_dir" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$root_dir" status --porcelain 2>/dev/null)" ] || commit="$commit-dirty"
podman tag "$image" "$repo:$version" "$repo:$version-$commit"
echo "tagged $repo:$version and $repo:$version-$commit" >&2
podman image inspect --format '{{.Size}}' "$image" | awk -v i="$image" '{ printf "%s: %.0f MB\n", i, $1 / 1e6 }' >&2
echo "$image"
