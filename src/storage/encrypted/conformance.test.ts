import { newMasterKeyText, parseMasterKey } from '../../lib/encryption/format.js';
import { runBackendConformance } from '../conformance/index.test-suite.js';
import { localUnderTest } from '../local/under-test.test-suite.js';
import { encryptedBackend } from './encrypted-backend.js';
import { plaintextSizes } from './plaintext-sizes.js';

const master = parseMasterKey(newMasterKeyText());

runBackendConformance(
  'encrypted local',
  async () => {
    // As openDataDir builds it under a key: the backend below reports plaintext sizes in its events,
    // so the suite's sums of event sizes against a walk's sizes hold as on a plain backend.
    const h = await localUnderTest(plaintextSizes);
    return { ...h, backend: encryptedBackend(h.backend, { current: master, all: [master], onBadFile: () => undefined }) };
  },
);
