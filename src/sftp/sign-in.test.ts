import { test } from 'node:test';
import assert from 'node:assert/strict';
import ssh2, { type AuthContext } from 'ssh2';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { BasicAuthenticator } from '../dav/basic-auth.js';
import type { SshKeyService } from '../services/ssh-keys.js';
import type { AuditEvent } from '../services/audit.js';
import { generateHostKey } from './host-key.js';
import { createSftpSignIn } from './sign-in.js';

const alice: Principal = { kind: 'user', via: 'password', userId: 'u1', username: 'alice', isAdmin: false, readOnly: false };
const key = ssh2.utils.parseKey(generateHostKey()) as ssh2.ParsedKey;
const blob = key.getPublicSSH();
const signed = Buffer.from('session data');

type Case = { name: string; ctx: Record<string, unknown>; basic?: () => Promise<Principal | undefined>; answer: 'accept' | 'reject'; event: string };
const CASES: Case[] = [
  { name: 'the right password', ctx: { method: 'password', password: 'pw' }, basic: async () => alice, answer: 'accept', event: 'login.succeeded' },
  {
    name: 'the right password of an account with TOTP on',
    ctx: { method: 'password', password: 'pw' },
    basic: async () => {
      throw new AppError('unauthorized', 'two factors');
    },
    answer: 'reject',
    event: 'login.failed',
  },
  { name: 'a key of the user with its signature', ctx: { method: 'publickey', key: { algo: 'ssh-ed25519', data: blob }, blob: signed, signature: key.sign(signed) }, answer: 'accept', event: 'login.succeeded' },
  { name: 'a key of the user with a wrong signature', ctx: { method: 'publickey', key: { algo: 'ssh-ed25519', data: blob }, blob: signed, signature: Buffer.alloc(64) }, answer: 'reject', event: 'login.failed' },
];

// The client is told the outcome only once its audit entry is in, as an HTTP sign-in's answer is
// (src/app/audit-hook.ts): a client that sees "refused" or "signed in" and reads the log finds it.
for (const c of CASES) {
  test(`SFTP sign-in, ${c.name}: the ${c.answer} waits for its ${c.event} entry`, async () => {
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const signIn = createSftpSignIn({
      basic: { authenticate: c.basic ?? (async () => undefined), known: async () => undefined } as unknown as BasicAuthenticator,
      sshKeys: { principalFor: async () => alice } as unknown as SshKeyService,
      throttle: undefined,
      clock: { now: () => 0 } as never,
      audit: async (e: AuditEvent) => {
        seen.push(`recording ${e.type}`);
        await held;
        seen.push(`recorded ${e.type}`);
      },
    })('127.0.0.1', () => seen.push('throttled'));
    const ctx = { username: 'alice', ...c.ctx, accept: () => seen.push('accept'), reject: () => seen.push('reject') } as unknown as AuthContext;
    const done = signIn(ctx);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, [`recording ${c.event}`], 'nothing answered while the entry is being written');
    release();
    await done;
    assert.deepEqual(seen, [`recording ${c.event}`, `recorded ${c.event}`, c.answer]);
  });
}
