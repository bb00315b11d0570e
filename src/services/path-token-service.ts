import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { keyId, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { makePathToken, pathTokenExpiresAt, pathTokenRecipient, verifyPathToken } from './path-tokens.js';
import type { Door } from './door.js';

export type PathTokenService = ReturnType<typeof createPathTokenService>;

/** Issues and checks path tokens against the owner's current auth epoch (seed §2.3, CONTRACT "Path tokens"). */
export function createPathTokenService(deps: { secret: Buffer; store: MetadataStore; clock: Clock; maxTtl: number; operations?: Pick<Door, 'may'> }) {
  const nowSeconds = () => Math.floor(deps.clock.now() / 1000);
  return {
    /**
     * A token for exactly `key`, valid `validForSeconds` (default and maximum: the configured TTL). `recipient`:
     * made by someone `key` is shared with, not its owner (the route has checked the grant).
     */
    async make(key: StorageKey, validForSeconds: number | undefined, recipient?: string): Promise<{ token: string; expiresAt: number }> {
      const ttl = validForSeconds ?? deps.maxTtl;
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > deps.maxTtl) {
        throw new AppError('bad_request', `valid_for_seconds must be a whole number from 1 to ${deps.maxTtl}.`);
      }
      const owner = await deps.store.users.getByName(key.user);
      if (!owner) throw new AppError('unauthorized', 'You are not allowed to access this path.');
      const by = recipient === undefined ? undefined : await deps.store.users.getByName(recipient);
      if (recipient !== undefined && !by) throw new AppError('unauthorized', 'You are not allowed to access this path.');
      const expiresAt = pathTokenExpiresAt(deps.clock.now(), ttl);
      const claims = { owner: owner.username, keyId: keyId(key), expiresAt, authEpoch: owner.authEpoch, recipient: by && { name: by.username, authEpoch: by.authEpoch } };
      return { token: makePathToken(deps.secret, claims), expiresAt };
    },

    /**
     * The path-token principal for `key`, or undefined when the token does not authorize exactly it. A
     * recipient's token also needs the recipient alive and enabled and a grant that still reaches `key`
     * (asked now, so a revocation or leaving the group ends the token at once).
     */
    async verify(token: string, key: StorageKey): Promise<Principal | undefined> {
      const owner = await deps.store.users.getByName(key.user);
      if (!owner || owner.disabled) return undefined;
      const id = keyId(key);
      const name = pathTokenRecipient(token);
      let recipient: { name: string; authEpoch: string } | undefined;
      if (name !== undefined) {
        const by = await deps.store.users.getByName(name);
        // A recipient's token names another user's key: the owner's own tokens name no recipient.
        if (!by || by.disabled || !deps.operations || by.username === key.user) return undefined;
        recipient = { name: by.username, authEpoch: by.authEpoch };
        const asRecipient = { kind: 'user', userId: by.id, username: by.username, isAdmin: false, via: 'session', sessionId: '', readOnly: false } as const;
        // The recipient may still read `key`: the operation layer's answer (a grant that still reaches it).
        if (!(await deps.operations.may(asRecipient, key, 'GET').then(() => true, (e: unknown) => (e instanceof AppError ? false : Promise.reject(e))))) return undefined;
      }
      const check = verifyPathToken(deps.secret, token, { owner: owner.username, keyId: id, authEpoch: owner.authEpoch, recipient }, nowSeconds());
      return check === 'ok' ? { kind: 'pathToken', username: owner.username, path: id, readOnly: true } : undefined;
    },
  };
}
