import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import { isValidName } from '../../domain/names.js';
import { leasingIn } from '../conformance/index.test-suite.js';
import { createLocalBackend } from './local-backend.js';

/**
 * Property: any mix of concurrent `rename` writes under a few names, on top
 * of files already there, never overwrites a byte: every pre-existing file
 * keeps its contents and every write survives under its own name.
 */

const name = fc.constantFrom('a.txt', 'a (1).txt', 'a', '.env', 'archive.tar.gz', 'x'.repeat(250) + '.txt', 'é.md').filter(isValidName);

test('concurrent uploads under taken names never overwrite an existing file or each other', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(name, { maxLength: 3 }), fc.array(name, { minLength: 1, maxLength: 12 }), async (existing, uploads) => {
      const base = await mkdtemp(join(tmpdir(), 'fc-collide-'));
      const leasing = await leasingIn(base);
      try {
        const backend = createLocalBackend({ storageDir: join(base, 'storage'), tmpDir: join(base, 'tmp') }, leasing);
        await backend.init();
        const dir = { user: 'alice', segments: ['d'] };
        await backend.mkdir(dir, { parents: true, existOk: true });
        for (const n of existing) await backend.write({ user: 'alice', segments: ['d', n] }, Readable.from([`old ${n}`]), { ifExists: 'fail' });
        const results = await Promise.all(
          uploads.map((n, i) => backend.write({ user: 'alice', segments: ['d', n] }, Readable.from([`new ${i}`]), { ifExists: 'rename' })),
        );
        const folder = join(base, 'storage', 'alice', 'd');
        const onDisk = await readdir(folder);
        assert.equal(onDisk.length, existing.length + uploads.length, 'one file per upload plus the old ones');
        for (const n of existing) assert.equal(await readFile(join(folder, n), 'utf8'), `old ${n}`);
        const written = results.map((e) => e.name);
        assert.equal(new Set(written).size, written.length, 'every upload got its own name');
        for (const [i, e] of results.entries()) assert.equal(await readFile(join(folder, e.name), 'utf8'), `new ${i}`);
        assert.deepEqual(await readdir(join(base, 'tmp')), [], 'no staging left');
      } finally {
        await leasing.close();
        await rm(base, { recursive: true, force: true });
      }
    }),
    { numRuns: 40 },
  );
});
