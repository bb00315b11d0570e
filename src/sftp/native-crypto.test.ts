import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const { bindingAvailable } = require('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean };
// npm's postinstall (scripts/build-native.mjs) builds ssh2's binding for the Node that `npm ci`
// brings; another Node (the Node 22 smoke run) loads ssh2's JavaScript ciphers instead.
// The Node 22 smoke run (scripts/smoke-node22.sh) removes the `node` package from its copy.
const brought = ((): string | undefined => {
  try {
    return (require('node/package.json') as { version: string }).version.replace(/^v/, '');
  } catch {
    return undefined;
  }
})();
const skip = brought === undefined ? `this is Node ${process.version}; the node package npm ci brings is not installed here`
  : process.version.slice(1) === brought ? false : `this is Node ${process.version}, not the Node ${brought} npm ci brings`;

test("ssh2's native ciphers load in the Node npm ci brings (SFTP at a third of the speed without them)", { skip }, () => {
  assert.equal(bindingAvailable, true, 'run `node scripts/build-native.mjs` (npm postinstall) and read what it says');
});
