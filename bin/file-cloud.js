#!/usr/bin/env node
// Launcher only: all logic lives in the compiled CLI (npm ci builds it).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// First the runtime. On a Node older than 22.15 better-sqlite3 13 (Node-API 10) would crash the
// process with a segmentation fault and no word of why. In a checkout, `npm ci` has put Node 24 in
// node_modules (the `node` devDependency): run on that, so `node bin/file-cloud.js …` and the
// `file-cloud` command keep working on a machine whose own Node is older (README "Node.js").
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 15)) {
  const bundled = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (process.env.FILE_CLOUD_NODE_REEXEC !== '0' && existsSync(bundled)) {
    const child = spawn(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    // A signal sent to this pid alone (systemd, kill) reaches the server; one from a terminal reaches
    // both, and the server ignores the repeat while it drains.
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
    child.on('error', (e) => {
      process.stderr.write(`file-cloud: cannot start ${bundled}: ${e.message}\n`);
      process.exit(1);
    });
    child.on('exit', (code, signal) => {
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      } else process.exit(code ?? 1);
    });
  } else {
    process.stderr.write(
      `file-cloud: needs Node.js 22.15 or newer (24 recommended); this is ${process.version} (${process.execPath}).\n` +
        'In a checkout, `npm ci` installs Node 24 into node_modules, and then this command runs on it.\n',
    );
    process.exit(1);
  }
} else {
  import('../dist/src/cli/main.js').then((m) => m.main(process.argv.slice(2)));
}
