#!/usr/bin/env node
// Launcher only: all logic lives in the compiled CLI (npm ci builds it).
// First the runtime: on an older Node, better-sqlite3 13 (Node-API 10) crashes the process with a
// segmentation fault and no word of why; say what is needed instead (README "Requirements").
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 15)) {
  process.stderr.write(
    `file-cloud: needs Node.js 22.15 or newer (24 recommended); this is ${process.version} (${process.execPath}).\n` +
      'In a checkout, `npm start` runs the Node 24 that `npm ci` installed (node_modules/.bin/node).\n',
  );
  process.exit(1);
}
import('../dist/src/cli/main.js').then((m) => m.main(process.argv.slice(2)));
