import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { newMasterKeyText, parseMasterKey } from '../../lib/encryption/format.js';
import { leasingIn, runBackendConformance } from '../conformance/index.test-suite.js';
import { createLocalBackend } from '../local/local-backend.js';
import { encryptedBackend } from './encrypted-backend.js';

const leasings: { close(): Promise<void> }[] = [];
after(() => Promise.all(leasings.map((l) => l.close())));
const master = parseMasterKey(newMasterKeyText());

/** The suite's tests that add storage events up against a walk's (plaintext) sizes. */
const STORED_BYTE_ACCOUNTING = [
  'a metered copy reports before each file the exact bytes it will have copied, even while the source is written',
  'mutations are reported as storage events with their sizes',
  'concurrent replaces, deletes, moves and copies of the same names: the sizes the events report add up to the bytes stored',
  'files moved inside, out of and into a folder while it is deleted or moved away: the events add up to the bytes stored and no file is doubled',
];

runBackendConformance('encrypted local', async () => {
  const base = await mkdtemp(join(tmpdir(), 'fc-encc-'));
  const storageDir = join(base, 'storage');
  const tmpDir = join(base, 'tmp');
  const leasing = await leasingIn(base);
  leasings.push(leasing);
  const backend = encryptedBackend(createLocalBackend({ storageDir, tmpDir }, leasing), { current: master, all: [master], onBadFile: () => undefined });
  return {
    backend,
    cleanup: () => rm(base, { recursive: true, force: true }),
    staging: async () => (await readdir(tmpDir)).filter((n) => n !== 'tus'),
    resumableStaging: () => readdir(join(tmpDir, 'tus')).catch(() => []),
    removeStorage: () => rm(storageDir, { recursive: true }),
  };
}, Object.fromEntries(STORED_BYTE_ACCOUNTING.map((title) => [title, 'storage events, copy metering and so usage count stored bytes (80 bytes and 16 per 64 KiB more than a listing shows); docs/operations.md "Encryption at rest"'])));
