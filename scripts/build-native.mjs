#!/usr/bin/env node
// Optional native modules, built at npm's postinstall for the Node running this script, with the
// headers the `node` package ships (they hold OpenSSL's too), so nothing is downloaded:
// - ssh2's crypto binding (native AES-GCM and ChaCha20-Poly1305 for SFTP) is compiled by ssh2's own
//   install script, which npm runs with the Node that runs npm, often the machine's older one, not the
//   Node 24 of node_modules/.bin that runs File Cloud. Node 24 then refuses the module and ssh2 falls
//   back to building a JavaScript cipher per packet (SFTP at a third of the speed, docs/performance.md).
//   This rebuilds it.
// - File Cloud's own native/gcm-part.c (src/lib/encryption/native-gcm.ts): the encrypted Range read's
//   AES-GCM check and CTR decryption without node:crypto's cipher objects, and an upload's sealing
//   into memory the sealing stream reuses; and native/fs-ops.c (src/storage/local/fs-ops.ts):
//   a small upload's open, write, fsync, fstat and close in one job of the thread pool.
// Both are optional: when one cannot be built this says why and File Cloud runs the JavaScript path.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const say = (line) => console.log(`build-native: ${line}`);
const loadsIn = (code) => () => spawnSync(process.execPath, ['-e', code], { stdio: 'ignore' }).status === 0;
const root = dirname(dirname(new URL(import.meta.url).pathname));

// Headers of exactly this Node: the `node` package's own first, then those beside the binary
// (/usr/include/node of a distribution's Node, which may be another version).
const headersOf = (d) => {
  try {
    const h = readFileSync(join(d, 'include', 'node', 'node_version.h'), 'utf8');
    const part = (name) => new RegExp(`#define ${name} (\\d+)`).exec(h)?.[1];
    return `v${part('NODE_MAJOR_VERSION')}.${part('NODE_MINOR_VERSION')}.${part('NODE_PATCH_VERSION')}`;
  } catch {
    return undefined;
  }
};
const nodedir = [
  join(root, 'node_modules', 'node', 'node_modules', `node-${process.platform}-${process.arch}`),
  dirname(dirname(process.execPath)),
].find((d) => headersOf(d) === process.version);
const gyp = process.env.npm_config_node_gyp;
const openssl = /^\d+/.exec(process.versions.openssl)?.[0] ?? '3';

/** Builds `what` in `cwd` with node-gyp unless it already loads; says which, and why not. */
function build(what, cwd, loads, fallback) {
  if (loads()) {
    say(`${what} loads in Node ${process.version}`);
    return;
  }
  if (!nodedir || !gyp || !existsSync(gyp)) {
    say(`${what} does not load in Node ${process.version} and cannot be built here (${nodedir ? 'no node-gyp from npm' : `no headers of Node ${process.version}`}); ${fallback}`);
    return;
  }
  const built = spawnSync(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`, `--real_openssl_major=${openssl}`], {
    cwd,
    // npm passes its own nodedir setting down (Debian's npm: /usr, the system Node's headers), and
    // node-gyp takes it over the command line's
    env: { ...process.env, npm_config_nodedir: nodedir },
    encoding: 'utf8',
  });
  if (built.status === 0 && loads()) {
    say(`${what} built for Node ${process.version}`);
  } else {
    say(`building ${what} for Node ${process.version} failed (a C compiler, make and python3 are needed); ${fallback}`);
    console.log(`${built.stdout ?? ''}${built.stderr ?? ''}${built.error ? String(built.error) : ''}`.split('\n').slice(-15).join('\n'));
  }
}

let ssh2;
try {
  ssh2 = dirname(require.resolve('ssh2/package.json'));
} catch {
  // a production install without ssh2 has nothing of it to build
}
if (ssh2) {
  build("ssh2's crypto binding", join(ssh2, 'lib', 'protocol', 'crypto'), loadsIn("process.exit(require('ssh2/lib/protocol/crypto.js').bindingAvailable ? 0 : 1)"), "SFTP uses ssh2's JavaScript ciphers");
}
const gcm = join(root, 'native', 'build', 'Release', 'gcm_part.node');
const fsOps = join(root, 'native', 'build', 'Release', 'fs_ops.node');
const mtime = (f) => (existsSync(f) ? statSync(f).mtimeMs : 0);
// A module built from older sources still loads: both are rebuilt when a source is newer than either.
const current = () => Math.min(mtime(gcm), mtime(fsOps)) > Math.max(...['gcm-part.c', 'fs-ops.c', 'binding.gyp'].map((f) => mtime(join(root, 'native', f))));
const nativeLoads = loadsIn(
  `const m = require(${JSON.stringify(gcm)}), f = require(${JSON.stringify(fsOps)}); process.exit(typeof m.openPart === 'function' && typeof m.seal === 'function' && typeof f.durableWrite === 'function' && typeof f.renameNoReplaceSync === 'function' && typeof f.openNoLinksSync === 'function' ? 0 : 1)`,
);
build(
  'native/ (gcm-part.c: AES-GCM for encrypted Range reads and uploads; fs-ops.c: a small upload\'s staging write in one thread-pool job)',
  join(root, 'native'),
  () => current() && nativeLoads(),
  'encrypted Range reads and uploads use node:crypto, small uploads node:fs',
);
