import type { AccessRule, GrantAccess } from '../domain/access.js';
import type { Principal } from '../domain/principal.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { Entry } from '../storage/backend.js';

/**
 * What a service that takes keys of its own (WebDAV, tus, search, share links, grants) asks of the
 * operation layer (src/services/operations.ts, which implements it). The layer needs those services
 * in turn, so they name it here, by what they use, and the import graph keeps no circle
 * (test/process/layering.test.ts).
 */

export type MayOptions = {
  /** The rule the front end declared for the route (default: the principal's own, `ruleFor`). */
  readonly rule?: AccessRule;
  /** False: only the principal's own tree (a grant lets its recipient use an item, not share it on). */
  readonly throughGrants?: boolean;
};

/** May `principal` do `method` on `key`? The grant it goes through, if any; else the refusal, thrown (AppError). */
export type May = (principal: Principal, key: StorageKey, method: string, opts?: MayOptions) => Promise<GrantAccess | undefined>;

/** An item another user shares with the principal, as `Shared with me` lists it: its name there, its owner's key, the grant. */
export type SharedItem = { readonly name: string; readonly root: StorageKey; readonly isFile: boolean; readonly access: GrantAccess };

/** The part of one principal's operations the services above call. */
export type PrincipalDoor = {
  may(key: StorageKey, method: string, opts?: MayOptions): Promise<GrantAccess | undefined>;
  stat(key: StorageKey): Promise<Entry>;
  /** Every member with its ETag, in pages (a WebDAV PROPFIND's listing). */
  listWithEtags(key: StorageKey): Promise<AsyncIterable<Entry[]>>;
  /** The items shared with the principal that `decide` lets them read. */
  sharedWithMe(): Promise<SharedItem[]>;
};

/** The operation layer, as the services above it see it. */
export type Door = { readonly may: May; as(principal: Principal): PrincipalDoor };
