import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../helpers/server.js';

/**
 * An older Node to start the CLI with: FC_OLD_NODE, else the system's /usr/bin/node when it is below
 * 22.15 (Node 20 on the machines here). Without one the test skips, saying why.
 */
function oldNode(): string | undefined {
  const candidates = [process.env.FC_OLD_NODE, '/usr/bin/node'].filter((p): p is string => !!p && existsSync(p));
  for (const bin of candidates) {
    const v = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    const [major = 0, minor = 0] = v.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 15)) return bin;
  }
  return undefined;
}

const old = oldNode();

test('on a Node below 22.15 the CLI says which Node it needs and exits 1 (better-sqlite3 13 would crash it)', { skip: old ? false : 'no Node below 22.15 here (set FC_OLD_NODE)' }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-runtime-'));
  try {
    const r = spawnSync(old as string, [BIN, 'user', 'add', 'alice', '--password', 'alice-password', '--data-dir', dir], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /Node\.js 22\.15 or newer/);
    assert.match(r.stderr, /v\d+\.\d+\.\d+/, 'names the Node it found');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
