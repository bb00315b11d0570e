import { newMasterKeyText, parseMasterKey } from '../../lib/encryption/format.js';
import { runBackendConformance } from '../conformance/index.test-suite.js';
import { localUnderTest } from '../local/under-test.test-suite.js';
import { encryptedBackend } from './encrypted-backend.js';

const master = parseMasterKey(newMasterKeyText());

/** The suite's tests that add storage events up against a walk's (plaintext) sizes. */
const STORED_BYTE_ACCOUNTING = [
  'a metered copy reports before each file the exact bytes it will have copied, even while the source is written',
  'mutations are reported as storage events with their sizes',
  'concurrent replaces, deletes, moves and copies of the same names: the sizes the events report add up to the bytes stored',
  'files moved inside, out of and into a folder while it is deleted or moved away: the events add up to the bytes stored and no file is doubled',
];

runBackendConformance(
  'encrypted local',
  async () => {
    const h = await localUnderTest();
    return { ...h, backend: encryptedBackend(h.backend, { current: master, all: [master], onBadFile: () => undefined }) };
  },
  Object.fromEntries(STORED_BYTE_ACCOUNTING.map((title) => [title, 'storage events, copy metering and so usage count stored bytes (80 bytes and 16 per 64 KiB more than a listing shows); docs/operations.md "Encryption at rest"'])),
);
