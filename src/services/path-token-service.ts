import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { keyId, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { MetadataStore } from '../store/types.js';
import { makePathToken, verifyPathToken } from './path-tokens.js';

export type PathTokenService = ReturnType<typeof createPathTokenService>;

/** Issues and checks path tokens against the owner's current auth epoch (seed §2.3, CONTRACT "Path tokens"). */
export function createPathTokenService(deps: { secret: Buffer; store: MetadataStore; clock: Clock; maxTtl: number }) {
  const nowSeconds = () => Math.floor(deps.clock.now() / 1000);
  return {
    /** A token for exactly `key`, valid `validForSeconds` (default and maximum: the configured TTL). */
    async make(key: StorageKey, validForSeconds: number | undefined): Promise<{ token: string; expiresAt: number }> {
      const ttl = validForSeconds ?? deps.maxTtl;
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > deps.maxTtl) {
        throw new AppError('bad_request', `valid_for_seconds must be a whole number from 1 to ${deps.maxTtl}.`);
      }
      const owner = await deps.store.users.getByName(key.user);
      if (!owner) throw new AppError('unauthorized', 'You are not allowed to access this path.');
      const expiresAt = nowSeconds() + ttl;
      return { token: makePathToken(deps.secret, { owner: owner.username, keyId: keyId(key), expiresAt, authEpoch: owner.authEpoch }), expiresAt };
    },

    /** The path-token principal for `key`, or undefined when the token does not authorize exactly it. */
    async verify(token: string, key: StorageKey): Promise<Principal | undefined> {
      const owner = await deps.store.users.getByName(key.user);
      if (!owner || owner.disabled) return undefined;
      const id = keyId(key);
      const check = verifyPathToken(deps.secret, token, { owner: owner.username, keyId: id, authEpoch: owner.authEpoch }, nowSeconds());
      return check === 'ok' ? { kind: 'pathToken', username: owner.username, path: id, readOnly: true } : undefined;
    },
  };
}
