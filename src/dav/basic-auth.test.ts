import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthService } from '../services/auth.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { createBasicAuthenticator } from './basic-auth.js';

const encode = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');

// A refused credential is answered only once its login.failed entry is in, as an HTTP sign-in's
// answer is (src/app/audit-hook.ts): a WebDAV or SFTP client told "refused" finds the entry.
for (const [name, password] of [
  ['a wrong account password', 'not-her-password'],
  ['a wrong app password', 'fck_not-a-key'],
] as const) {
  test(`Basic authenticator, ${name}: undefined only after its refusal is recorded`, async () => {
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const basic = createBasicAuthenticator({
      store: { users: { getByName: async () => ({ id: 'u1', username: 'alice', disabled: false, totpEnabled: false, authEpoch: '1' }) } } as unknown as MetadataStore,
      auth: { verifyPassword: async () => undefined } as unknown as AuthService,
      keys: { authenticate: async () => undefined } as unknown as ApiKeyService,
      throttle: undefined,
      clock: { now: () => 0 } as never,
      secret: Buffer.alloc(32),
      onFailure: async (username) => {
        seen.push(`recording ${username}`);
        await held;
        seen.push(`recorded ${username}`);
      },
    });
    const answer = basic.authenticate(encode('alice', password), '127.0.0.1').then((p) => seen.push(`answered ${String(p)}`));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['recording alice']);
    release();
    await answer;
    assert.deepEqual(seen, ['recording alice', 'recorded alice', 'answered undefined']);
  });
}
