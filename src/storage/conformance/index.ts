import { test } from 'node:test';
import { changeTests } from './changes.js';
import { readTests } from './reads.js';
import { resumableTests } from './resumable.js';
import { seamTests } from './seam.js';
import { keyOf, type BackendUnderTest, type It } from './support.js';
import { writeTests } from './writes.js';

export { bodyOf, keyOf, leasingIn, losing, raceRounds, readAll, usageLedger, rejectsCode, sha256, slowBody, type BackendUnderTest } from './support.js';

/**
 * The storage backend conformance suite. Every StorageBackend implementation
 * (local disk, S3) runs exactly these tests; a backend is done when
 * it passes them all.
 */
export function runBackendConformance(name: string, makeBackend: () => Promise<BackendUnderTest>): void {
  const it: It = (title, fn, opts = {}) =>
    test(`${name}: ${title}`, async () => {
      const h = await makeBackend();
      try {
        await h.backend.init();
        if (opts.root !== false) await h.backend.mkdir(keyOf(''), { parents: true, existOk: true });
        await fn({ ...h, b: h.backend });
      } finally {
        await h.backend.close();
        await h.cleanup();
      }
    });
  readTests(it);
  writeTests(it);
  changeTests(it);
  seamTests(it);
  resumableTests(it);
}
