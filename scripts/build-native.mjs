#!/usr/bin/env node
// ssh2's optional crypto binding (native AES-GCM and ChaCha20-Poly1305 for SFTP) is compiled by
// ssh2's own install script, which npm runs with the Node that runs npm, often the machine's older
// one, not the Node 24 of node_modules/.bin that runs File Cloud. Node 24 then refuses the module
// and ssh2 falls back to building a JavaScript cipher per packet (SFTP at a third of the speed,
// docs/performance.md). This rebuilds it for the Node running this script (npm's postinstall),
// with the headers the `node` package ships, so nothing is downloaded. The binding is optional:
// when it cannot be built this says why and File Cloud runs without it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const say = (line) => console.log(`build-native: ${line}`);
const loads = () => spawnSync(process.execPath, ['-e', "process.exit(require('ssh2/lib/protocol/crypto.js').bindingAvailable ? 0 : 1)"], { stdio: 'ignore' }).status === 0;

let ssh2;
try {
  ssh2 = dirname(require.resolve('ssh2/package.json'));
} catch {
  process.exit(0); // a production install without ssh2 has nothing to build
}
if (loads()) {
  say(`ssh2's crypto binding loads in Node ${process.version}`);
  process.exit(0);
}
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
if (!nodedir || !gyp || !existsSync(gyp)) {
  say(`ssh2's crypto binding does not load in Node ${process.version} and cannot be rebuilt here (${nodedir ? 'no node-gyp from npm' : `no headers of Node ${process.version}`}); SFTP uses ssh2's JavaScript ciphers`);
  process.exit(0);
}
const openssl = /^\d+/.exec(process.versions.openssl)?.[0] ?? '3';
const built = spawnSync(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`, `--real_openssl_major=${openssl}`], {
  cwd: join(ssh2, 'lib', 'protocol', 'crypto'),
  // npm passes its own nodedir setting down (Debian's npm: /usr, the system Node's headers), and
  // node-gyp takes it over the command line's
  env: { ...process.env, npm_config_nodedir: nodedir },
  encoding: 'utf8',
});
if (built.status === 0 && loads()) {
  say(`ssh2's crypto binding rebuilt for Node ${process.version}`);
} else {
  say(`rebuilding ssh2's crypto binding for Node ${process.version} failed; SFTP uses ssh2's JavaScript ciphers`);
  console.log(`${built.stdout ?? ''}${built.stderr ?? ''}`.split('\n').slice(-15).join('\n'));
}
