import { test } from 'node:test';
import { changeTests } from './changes.test-suite.js';
import { readTests } from './reads.test-suite.js';
import { resumableTests } from './resumable.test-suite.js';
import { seamTests } from './seam.test-suite.js';
import { keyOf, type BackendUnderTest, type It } from './support.test-suite.js';
import { writeTests } from './writes.test-suite.js';

export { assertCreatedThenReplaced, bodyOf, keyOf, leasingIn, losing, raceRounds, readAll, usageLedger, rejectsCode, sha256, slowBody, type BackendUnderTest } from './support.test-suite.js';

/**
 * The storage backend conformance suite. Every StorageBackend implementation
 * (local disk, S3) runs exactly these tests; a backend is done when
 * it passes them all. A layer over a backend may name tests that do not
 * hold for it in `known`, each with the reason (shown as the test's skip).
 */
export function runBackendConformance(name: string, makeBackend: () => Promise<BackendUnderTest>, known: Readonly<Record<string, string>> = {}): void {
  const it = conformanceIt(name, makeBackend, known);
  readTests(it);
  writeTests(it);
  changeTests(it);
  seamTests(it);
  resumableTests(it);
}

export { resumableTests };

/** How a suite's test runs on a fresh backend: for one group of the suite alone (a layer that changes only that part). */
export function conformanceIt(name: string, makeBackend: () => Promise<BackendUnderTest>, known: Readonly<Record<string, string>> = {}): It {
  return (title, fn, opts = {}) =>
    test(`${name}: ${title}`, { skip: known[title] }, async () => {
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
}
