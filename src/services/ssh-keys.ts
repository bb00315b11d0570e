import { randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { Principal, UserPrincipal } from '../domain/principal.js';
import { parseSshPublicKey, sshFingerprint } from '../domain/ssh-public-key.js';
import type { Clock } from '../lib/clock.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { SshKey } from '../store/ssh-keys.js';
import { isUniqueViolation } from '../store/sql-errors.js';
import { MAX_KEY_NAME_LENGTH, LAST_USED_RESOLUTION_MS } from './api-keys.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Keys one account may hold: enough for every machine a person has, few enough that a sign-in's lookup stays one row. */
export const MAX_SSH_KEYS = 100;

export type SshKeyService = ReturnType<typeof createSshKeyService>;

/**
 * Public keys for SFTP sign-in: added, listed and removed by their owner with a signed-in session
 * (an app password cannot add a key, or a leaked one could plant a lasting way in), and asked by
 * the SFTP front end when a client offers one.
 */
export function createSshKeyService(deps: { store: MetadataStore; clock: Clock; onError?: (e: unknown) => void }) {
  const { store, clock } = deps;
  const onError = deps.onError ?? (() => undefined);

  return {
    async add(principal: UserPrincipal, input: { name: unknown; key: unknown }): Promise<SshKey> {
      const { name, key } = input;
      if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_KEY_NAME_LENGTH || /\p{Cc}/u.test(name)) {
        throw new AppError('bad_request', sentence('apiDetail.keyName', { max: MAX_KEY_NAME_LENGTH }));
      }
      if (typeof key !== 'string') throw new AppError('bad_request', sentence('apiDetail.sshKeyLine'));
      let parsed;
      try {
        parsed = parseSshPublicKey(key);
      } catch (e) {
        throw new AppError('bad_request', (e as Error).message);
      }
      const existing = await store.sshKeys.listByUser(principal.userId);
      if (existing.some((k) => k.fingerprint === parsed.fingerprint)) throw new AppError('already_exists', `This key (${parsed.fingerprint}) is added already.`);
      if (existing.length >= MAX_SSH_KEYS) throw new AppError('bad_request', sentence('apiDetail.sshKeyMax', { max: MAX_SSH_KEYS }));
      const row: SshKey = { id: randomUUID(), userId: principal.userId, name: name.trim(), algorithm: parsed.algorithm, publicKey: parsed.blob, fingerprint: parsed.fingerprint, createdAt: clock.now(), lastUsedAt: undefined };
      try {
        await store.sshKeys.create(row);
      } catch (e) {
        // The same key added twice at once: the unique index lets one in.
        if (isUniqueViolation(e)) throw new AppError('already_exists', `This key (${parsed.fingerprint}) is added already.`);
        throw e;
      }
      return row;
    },

    async list(principal: UserPrincipal): Promise<SshKey[]> {
      return store.sshKeys.listByUser(principal.userId);
    },

    /** Another user's id is as unknown as a made-up one (404). */
    async remove(principal: UserPrincipal, id: string): Promise<void> {
      if (id.length > 64 || !(await store.sshKeys.delete(id, principal.userId))) throw new AppError('not_found', 'You have no SSH key with this id.');
    },

    /**
     * Whether `blob` (a key a client offers, of `algorithm`) is one of the user's keys; undefined
     * when not, or the user is unknown or disabled. The signature over the session is the SSH
     * server's to check; this only says whose key it is.
     */
    async principalFor(username: string, algorithm: string, blob: Buffer): Promise<Principal | undefined> {
      const user = await store.users.getByName(username);
      if (!user || user.disabled) return undefined;
      const key = await store.sshKeys.find(user.id, sshFingerprint(blob));
      if (!key || key.algorithm !== algorithm || key.publicKey !== blob.toString('base64')) return undefined;
      const now = clock.now();
      if (key.lastUsedAt === undefined || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) store.sshKeys.touch(key.id, now, now - LAST_USED_RESOLUTION_MS).catch(onError);
      return { kind: 'user', via: 'ssh-key', sshKeyId: key.id, userId: user.id, username: user.username, isAdmin: user.isAdmin, readOnly: false };
    },
  };
}
