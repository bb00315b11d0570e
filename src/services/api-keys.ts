import { randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { Principal, UserPrincipal } from '../domain/principal.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import type { ApiKey } from '../store/api-keys.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { sentence } from '../lib/i18n/sentences.js';

/**
 * App passwords / API keys: `fck_` + 256 random bits, so a key can never pass
 * for an access (`fca_`), refresh (`fcr_`) or path token; stored only as its
 * SHA-256, like tokens (a stolen database opens nothing).
 */
export const KEY_PREFIX = 'fck_';
export const MAX_KEY_NAME_LENGTH = 100;
/** Longest lifetime a client may ask for: 100 years (a bound only so times stay well inside 64 bits). */
export const MAX_KEY_EXPIRES_IN = 100 * 365 * 86_400;
/** The last-used time is written at most once per this interval per key: a key used by a sync client must not cost a write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export type CreateKeyInput = { name: unknown; readOnly: unknown; expiresIn: unknown };

/** Checks a new key's fields; pure, table-tested in api-keys.test.ts. */
export function validateKeyInput(input: CreateKeyInput): { name: string; readOnly: boolean; expiresIn: number | undefined } {
  const { name, readOnly, expiresIn } = input;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_KEY_NAME_LENGTH || /\p{Cc}/u.test(name)) {
    throw new AppError('bad_request', sentence('apiDetail.keyName', { max: MAX_KEY_NAME_LENGTH }));
  }
  if (readOnly !== undefined && typeof readOnly !== 'boolean') throw new AppError('bad_request', sentence('apiDetail.readOnly'));
  if (expiresIn !== undefined && expiresIn !== null && (typeof expiresIn !== 'number' || !Number.isSafeInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_KEY_EXPIRES_IN)) {
    throw new AppError('bad_request', sentence('apiDetail.expiresIn', { max: MAX_KEY_EXPIRES_IN }));
  }
  return { name: name.trim(), readOnly: readOnly ?? false, expiresIn: typeof expiresIn === 'number' ? expiresIn : undefined };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;

export function createApiKeyService(deps: { store: MetadataStore; clock: Clock; onError?: (e: unknown) => void }) {
  const { store, clock } = deps;
  const onError = deps.onError ?? (() => undefined);
  const notFound = () => new AppError('not_found', 'You have no app password with this id.');

  return {
    /** A new key for the caller; the key itself (`secret`) is in this answer only. */
    async create(principal: UserPrincipal, input: CreateKeyInput): Promise<{ key: ApiKey; secret: string }> {
      const { name, readOnly, expiresIn } = validateKeyInput(input);
      const now = clock.now();
      const key = randomToken(KEY_PREFIX, 32);
      const row: ApiKey = { id: randomUUID(), userId: principal.userId, name, readOnly, createdAt: now, expiresAt: expiresIn === undefined ? undefined : now + expiresIn * 1000, lastUsedAt: undefined };
      await store.apiKeys.create({ ...row, keyHash: sha256Hex(key) });
      return { key: row, secret: key };
    },

    async list(principal: UserPrincipal): Promise<ApiKey[]> {
      return store.apiKeys.listByUser(principal.userId);
    },

    /** Deletes one of the caller's keys; another user's id is as unknown as a made-up one (404). */
    async revoke(principal: UserPrincipal, id: string): Promise<void> {
      if (id.length > 64 || !(await store.apiKeys.delete(id, principal.userId))) throw notFound();
    },

    /**
     * The principal behind a key, or undefined (unknown, expired, revoked, owner disabled). The
     * last-used time is written at most once per LAST_USED_RESOLUTION_MS, without holding up the request.
     */
    async authenticate(key: string): Promise<Principal | undefined> {
      if (!key.startsWith(KEY_PREFIX) || key.length > 128) return undefined;
      const now = clock.now();
      const found = await store.apiKeys.findByHash(sha256Hex(key), now);
      if (!found || found.user.disabled) return undefined;
      const { key: k, user } = found;
      if (k.lastUsedAt === undefined || now - k.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
        store.apiKeys.touch(k.id, now, now - LAST_USED_RESOLUTION_MS).catch(onError);
      }
      return { kind: 'user', via: 'key', keyId: k.id, userId: user.id, username: user.username, isAdmin: user.isAdmin, readOnly: k.readOnly };
    },
  };
}
