import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateSecret } from './secret.js';

test('processes creating the secret at once all get the one key that landed, never an empty file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-secret-'));
  try {
    const file = join(dir, 'secret');
    const keys = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateSecret(file)));
    assert.equal(new Set(keys.map((k) => k.toString('hex'))).size, 1);
    assert.equal(keys[0]?.length, 32);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dir), ['secret'], 'no temp file is left');
    assert.deepEqual(await loadOrCreateSecret(file), keys[0], 'a later start reads the same key');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a damaged secret file is refused with what to do, not silently replaced', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-secret-'));
  try {
    const file = join(dir, 'secret');
    await writeFile(file, '');
    await assert.rejects(loadOrCreateSecret(file), /secret file .* is damaged \(0 bytes\); remove it/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
