#!/usr/bin/env bash
# helm and kubeconform for the chart checks, built with `go install` (the Go module proxy is
# reachable, their release downloads are not) into a cache outside the repository, keyed by version:
#   ${LATCHKEY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/tools}/<tool>-<version>/<tool>
# Only the first use builds a tool (helm takes a few minutes on 2 cores).
#
# Two ways to use it:
#   source test/chart/tools.sh; helm="$(latchkey_tool helm)"     (test/chart/verify.sh)
#   bash test/chart/tools.sh helm                                 prints the path of helm
#   bash test/chart/tools.sh kubeconform                          prints the path of kubeconform
# (test/chart/chart.test.ts runs the second form.) Build output goes to standard error; standard
# output carries the path only.

# Go lives in /usr/local/go on the machines this runs on, even when a login shell did not put it on PATH.
[ -d /usr/local/go/bin ] && case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="$PATH:/usr/local/go/bin" ;; esac
LATCHKEY_HELM_VERSION=v4.3.1
LATCHKEY_KUBECONFORM_VERSION=v0.8.0
LATCHKEY_TOOLS_DIR="${LATCHKEY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey/tools}"

# latchkey_go_tool NAME VERSION PACKAGE: print the path of NAME, building it on first use.
latchkey_go_tool() {
  local name="$1" version="$2" pkg="$3"
  local dir="$LATCHKEY_TOOLS_DIR/$name-$version"
  if [ ! -x "$dir/$name" ]; then
    command -v go >/dev/null 2>&1 || { echo "tools.sh: Go is needed to build $name" >&2; return 1; }
    echo "building $name $version (first run only)..." >&2
    local tmp="$dir.tmp.$$" gowork
    gowork="$(mktemp -d)"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # Outside any module, so the repository's go.mod files play no part.
    if ! (cd "$gowork" && GOBIN="$tmp" GOFLAGS=-mod=mod go install "$pkg@$version") >&2; then
      rm -rf "$tmp" "$gowork"
      return 1
    fi
    rm -rf "$gowork"
    # Another run may have finished the same build meanwhile: keep whichever is in place.
    if [ -x "$dir/$name" ]; then rm -rf "$tmp"; else rm -rf "$dir"; mv "$tmp" "$dir"; fi
  fi
  echo "$dir/$name"
}

# latchkey_tool helm|kubeconform: print the path of the tool at the pinned version.
latchkey_tool() {
  case "$1" in
    helm) latchkey_go_tool helm "$LATCHKEY_HELM_VERSION" helm.sh/helm/v4/cmd/helm ;;
    kubeconform) latchkey_go_tool kubeconform "$LATCHKEY_KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform ;;
    *) echo "tools.sh: unknown tool '$1' (helm or kubeconform)" >&2; return 2 ;;
  esac
}

# Run directly (not sourced): print the path of the tool named by the first argument.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -eq 1 ] || { echo "usage: $0 helm|kubeconform" >&2; exit 2; }
  latchkey_tool "$1"
fi
