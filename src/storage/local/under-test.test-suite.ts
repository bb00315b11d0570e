import { after } from 'node:test';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StorageBackend } from '../backend.js';
import { leasingIn, type BackendUnderTest } from '../conformance/index.test-suite.js';
import { createLocalBackend } from './local-backend.js';
import type { SizeView } from '../size-view.js';

/** The lease stores of every backend made here, closed when the file's tests are done. */
const leasings: { close(): Promise<void> }[] = [];
after(() => Promise.all(leasings.map((l) => l.close())));

/** A local backend in a temporary directory of its own (storage/ and tmp/ below it). */
export async function fresh(sizes?: SizeView): Promise<{ base: string; storageDir: string; tmpDir: string; backend: StorageBackend }> {
  const base = await mkdtemp(join(tmpdir(), 'fc-local-'));
  const storageDir = join(base, 'storage');
  const tmpDir = join(base, 'tmp');
  const leasing = await leasingIn(base);
  leasings.push(leasing);
  return { base, storageDir, tmpDir, backend: createLocalBackend({ storageDir, tmpDir, ...(sizes ? { sizes } : {}) }, leasing) };
}

/** A fresh local backend as the conformance suite takes it; exported for the layers run over it (src/storage/encrypted/, with its SizeView). */
export async function localUnderTest(sizes?: SizeView): Promise<BackendUnderTest> {
  const { base, storageDir, tmpDir, backend } = await fresh(sizes);
  return {
    backend,
    cleanup: () => rm(base, { recursive: true, force: true }),
    // Resumable uploads outlive restarts in their own folder (data/tmp/tus), not in the short-lived staging.
    staging: async () => (await readdir(tmpDir)).filter((n) => n !== 'tus'),
    resumableStaging: () => readdir(join(tmpDir, 'tus')).catch(() => []),
    removeStorage: () => rm(storageDir, { recursive: true }),
  };
}

