#!/usr/bin/env bash
# Keeps the chart's copies of the CRDs and of the provider catalog equal to their sources.
#
# Helm cannot read files outside the chart directory (and does not follow symlinks
# reliably), so the chart carries copies:
#   crds/latchkey.dev_*.yaml     -> charts/latchkey/crds-files/
#   config/providers/*.yaml      -> charts/latchkey/catalog/   (kustomization.yaml excluded)
#
# Usage:
#   charts/latchkey/sync-crds.sh          copy the sources into the chart (run after editing them)
#   charts/latchkey/sync-crds.sh --check  exit 1 and list the differences if a copy is stale
#
# An empty or missing config/providers/ is fine: the catalog folder is then empty and
# the chart renders no Provider.
set -euo pipefail

chart="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$chart/../.." && pwd)"
mode="${1:-sync}"
case "$mode" in
  sync | --check) ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# pairs of "source directory|destination directory|glob"
pairs=(
  "$repo/crds|$chart/crds-files|latchkey.dev_*.yaml"
  "$repo/config/providers|$chart/catalog|*.yaml"
)

stale=0
for pair in "${pairs[@]}"; do
  IFS='|' read -r src dst glob <<<"$pair"
  mkdir -p "$dst"
  expected="$(mktemp -d)"
  trap 'rm -rf "$expected"' EXIT
  if [ -d "$src" ]; then
    shopt -s nullglob
    for f in "$src"/$glob; do
      [ "$(basename "$f")" = "kustomization.yaml" ] && continue
      cp "$f" "$expected/"
    done
    shopt -u nullglob
  fi
  # The CRD template adds helm.sh/resource-policy under metadata; it expects no annotations block there.
  if [ "$dst" = "$chart/crds-files" ]; then
    for f in "$expected"/*.yaml; do
      [ -e "$f" ] || continue
      if grep -qE '^  annotations:' "$f"; then
        echo "sync-crds: $(basename "$f") has metadata.annotations; templates/crds.yaml would duplicate the key. Update the template." >&2
        exit 1
      fi
    done
  fi
  if [ "$mode" = "--check" ]; then
    if ! diff -r "$expected" "$dst" --exclude=.gitkeep >/tmp/sync-crds-diff.$$ 2>&1; then
      echo "sync-crds: ${dst#"$repo"/} differs from ${src#"$repo"/}:" >&2
      sed -e "s|$expected|${src#"$repo"/}|g" -e "s|$dst|${dst#"$repo"/}|g" /tmp/sync-crds-diff.$$ | head -40 >&2
      stale=1
    else
      n="$(find "$dst" -maxdepth 1 -name '*.yaml' | wc -l)"
      echo "sync-crds: ${dst#"$repo"/} matches ${src#"$repo"/} ($n files)"
    fi
    rm -f /tmp/sync-crds-diff.$$
  else
    find "$dst" -maxdepth 1 -name '*.yaml' -delete
    shopt -s nullglob
    files=("$expected"/*.yaml)
    shopt -u nullglob
    if [ "${#files[@]}" -gt 0 ]; then cp "${files[@]}" "$dst/"; fi
    echo "sync-crds: copied ${#files[@]} files from ${src#"$repo"/} to ${dst#"$repo"/}"
  fi
  rm -rf "$expected"
  trap - EXIT
done

if [ "$stale" -ne 0 ]; then
  echo "sync-crds: run charts/latchkey/sync-crds.sh and commit the result." >&2
  exit 1
fi
