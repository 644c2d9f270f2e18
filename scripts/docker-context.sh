#!/usr/bin/env bash
# Assembles the Docker build context for the idlegrid image without any registry: the built
# dist/src, the production node_modules (npm prune --omit=dev on a copy, offline), the
# project's own Node 22 binary (node_modules/node, a dev dependency), bootstrap/, web/ and
# protocols/. Run after `npm install && npm run build`.
#   scripts/docker-context.sh [DIR]     default DIR: build/docker-context (printed on stdout)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/docker-context}
node_bin=$(readlink -f node_modules/.bin/node)
[ -x "$node_bin" ] || { echo "docker-context: no node_modules/.bin/node; run npm install" >&2; exit 1; }
[ -f dist/src/cli/bin.js ] || { echo "docker-context: no dist/src; run npm run build" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/app/bin" "$out/app/dist"
cp "$node_bin" "$out/app/bin/node"
cp -a dist/src "$out/app/dist/src"
cp -a dist/protocols "$out/app/dist/protocols" 2>/dev/null || true
cp -a package.json package-lock.json bootstrap web protocols "$out/app/"
cp -a Dockerfile .dockerignore "$out/"
# node_modules may be a symlink (worktrees): copy what it points to, then drop dev dependencies offline
cp -a "$(readlink -f node_modules)" "$out/app/node_modules"
(cd "$out/app" && npm prune --omit=dev --offline --no-audit --no-fund >/dev/null)
# root-owned and read-only to the node in the image: COPY keeps these modes (the Dockerfile sets no others)
chmod -R a+rX,go-w "$out/app"
chmod 755 "$out/app/bin/node"
echo "$out"
