#!/usr/bin/env bash
# Installs one Node.js version for the tests (`bash scripts/node-install.sh 24.21.0`) into the cache
# folder named in scripts/node-lines.conf, and prepares that version's test tree:
#   <cache>/<version>/node/               the npm registry's node-linux-<arch> package: bin/node and
#                                         include/node (the headers node-gyp builds against, offline)
#   <cache>/<version>/tree/node_modules/  one symbolic link per package of this checkout's
#                                         node_modules, except the ABI-bound addons of NODE_LINES_NATIVE,
#                                         which are copied and built there for this version
# Each step is skipped when its result is already there for the same version (the addon's marker
# file names the Node.js and package versions), so only the first run downloads and compiles.
# scripts/test-node.sh copies the sources next to that node_modules and runs the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=node-lines.conf
source "$root/scripts/node-lines.conf"
v=${1:?usage: scripts/node-install.sh VERSION (e.g. ${NODE_LINES[0]})}
dir="$NODE_LINES_CACHE/$v"
node="$dir/node"
tree="$dir/tree"
mkdir -p "$dir"
# One installer per version at a time (two test runs may start together).
exec 9>"$dir/.lock"
flock 9

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "node-install: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac

if [ "$("$node/bin/node" --version 2>/dev/null || true)" != "v$v" ]; then
  echo "node-install: downloading node-linux-$arch@$v from the npm registry" >&2
  rm -rf "$node" "$node.part" "$dir/pack"
  mkdir -p "$dir/pack" "$node.part"
  # npm pack checks the tarball against the registry's integrity hash.
  (cd "$dir/pack" && npm pack --silent "node-linux-$arch@$v" >/dev/null)
  tar xzf "$dir/pack/node-linux-$arch-$v.tgz" -C "$node.part" --strip-components=1
  rm -rf "$dir/pack"
  [ "$("$node.part/bin/node" --version)" = "v$v" ] || { echo "node-install: the package did not hold Node.js $v" >&2; exit 1; }
  [ -f "$node.part/include/node/node_api.h" ] || { echo "node-install: the package holds no headers" >&2; exit 1; }
  mv "$node.part" "$node"
fi

mods="$tree/node_modules"
mkdir -p "$mods"
is_native() {
  local n
  for n in "${NODE_LINES_NATIVE[@]}"; do [ "$1" = "$n" ] && return 0; done
  return 1
}
# Links are remade on every run so that they follow this checkout's node_modules.
find "$mods" -mindepth 1 -maxdepth 1 -type l -delete
shopt -s dotglob nullglob
for entry in "$root"/node_modules/*; do
  name=${entry##*/}
  is_native "$name" || ln -s "$root/node_modules/$name" "$mods/$name"
done
shopt -u dotglob nullglob

for pkg in "${NODE_LINES_NATIVE[@]}"; do
  version=$(node -p "require('$root/node_modules/$pkg/package.json').version")
  want="node $v, $pkg $version"
  [ "$(cat "$mods/$pkg/.vexil-built-for" 2>/dev/null || true)" = "$want" ] && continue
  echo "node-install: building $pkg $version for Node.js $v" >&2
  rm -rf "$mods/$pkg" "$mods/$pkg.part"
  cp -a "$root/node_modules/$pkg" "$mods/$pkg.part"
  rm -rf "$mods/$pkg.part/build"
  # The package's own install script (a prebuilt binary when one downloads, else node-gyp) run by
  # this version's node; npm_config_nodedir beats a user's .npmrc `nodedir` (which would build
  # against another version's headers).
  (cd "$mods/$pkg.part" && PATH="$node/bin:$PATH" npm_config_nodedir="$node" npm run --silent install >&2)
  echo "$want" >"$mods/$pkg.part/.vexil-built-for"
  mv "$mods/$pkg.part" "$mods/$pkg"
done
