import { randomUUID } from 'node:crypto';
import { grantRefusal, type GrantAccess } from '../domain/access.js';
import type { Door, SharedItem } from './door.js';
import { AppError } from '../domain/errors.js';
import type { Principal, UserPrincipal } from '../domain/principal.js';
import { isSameOrInside, parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import type { StorageEvent } from '../storage/events.js';
import type { RateLimiter } from '../store/rate-limiter.js';
import type { Grant } from '../store/grants.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { FilesService } from './files.js';
import { sentence } from '../lib/i18n/sentences.js';

export type Permission = Grant['permission'];

/** An item shared with a recipient (GET /api/grants/received): the grant that allows the most, and how it reaches them. */
export type ReceivedGrant = {
  readonly grant: Grant;
  /** The recipient's groups the item is shared with, by name. */
  readonly groups: string[];
  /** Shared with the recipient by name too. */
  readonly direct: boolean;
};

export type GrantService = ReturnType<typeof createGrantService>;

const pathOf = (key: StorageKey): string => key.segments.join('/');
const keyOf = (g: Grant): StorageKey => ({ user: g.owner, segments: g.path.split('/') });
const notYours = () => new AppError('unauthorized', 'You are not allowed to access this path.');
const noGrant = () => new AppError('not_found', 'There is no such grant.');
/**
 * One answer for every name a caller cannot share with (no such user or group, a disabled user,
 * oneself): telling them apart would let any account list the others by trying names.
 */
const noRecipient = () => new AppError('bad_request', sentence('apiDetail.noRecipient'));


/** Of a recipient's grants, the one that gives the most at `key` (undefined: none reaches it). */
export function bestGrant(grants: readonly Grant[], key: StorageKey): GrantAccess | undefined {
  let best: GrantAccess | undefined;
  for (const g of grants) {
    if (g.owner !== key.user) continue;
    const root = keyOf(g);
    if (!isSameOrInside(key, root)) continue;
    // A write grant wins; between equals, the one nearer the key (its own item rules apply).
    if (!best || (best.permission === 'read' && g.permission === 'write') || (best.permission === g.permission && root.segments.length > best.root.segments.length)) {
      best = { root, isFile: g.isFile, permission: g.permission };
    }
  }
  return best;
}

/**
 * Ends the WebDAV locks that `holders` (usernames) hold in other users' trees (`owner`: in that one's
 * only) and that no grant of theirs still lets them take: asked after a grant ends or narrows, and
 * after a holder leaves a group or is removed. A lock another write grant still reaches stays (its
 * holder could take it again at once). The rows leave the metadata store, so from here on no worker or
 * node honours them.
 */
export async function endLocksBeyondGrants(store: MetadataStore, holders: readonly string[], owner?: string): Promise<void> {
  for (const holder of new Set(holders)) {
    const locks = await store.davLocks.heldElsewhere(holder, owner);
    if (locks.length === 0) continue;
    const user = await store.users.getByName(holder);
    const grants = user ? await store.grants.listForRecipient(user.id, owner) : [];
    for (const lock of locks) {
      const key = { user: lock.user, segments: lock.path === '' ? [] : lock.path.split('/') };
      const grant = bestGrant(grants, key);
      if (!grant || grantRefusal(grant, key, 'LOCK')) await store.davLocks.delete(lock.token);
    }
  }
}

export function isPermission(v: unknown): v is Permission {
  return v === 'read' || v === 'write';
}

/**
 * Grants: an owner shares a file or folder with another account or a group
 * (docs/api.md "Grants"). The one place that answers which grant reaches a
 * key; `decide` (src/domain/access.ts) then says what it allows, for every
 * front end. Every question goes to the store (no cache), so a revocation, a
 * removed member or a removed user holds at once on every node and worker.
 * A grant follows its item when the owner renames or moves it and ends when
 * the item is deleted (storage events, awaited before the change is answered).
 */
export function createGrantService(deps: {
  store: MetadataStore;
  backend: StorageBackend;
  files: FilesService;
  /** The operation layer's check: the item a grant is made of is asked of `decide` (only its owner shares it). */
  operations: Pick<Door, 'may'>;
  clock: Clock;
  limiter?: RateLimiter | undefined;
  onError?: (e: unknown) => void;
}) {
  const { store } = deps;

  /** One item as its recipient sees it: the grant that allows the most, and every grant of it that reaches them. */
  const received = (g: Grant, all: readonly Grant[]): ReceivedGrant => ({
    grant: g,
    groups: [...new Set(all.filter((a) => a.toKind === 'group').map((a) => a.toName))].sort(),
    direct: all.some((a) => a.toKind === 'user'),
  });

  const onEvent = async (e: StorageEvent): Promise<void> => {
    if (e.type === 'deleted') return store.grants.deleteWithin(e.key.user, pathOf(e.key));
    if (e.type !== 'moved') return;
    // What was replaced at the destination ends, with its grants; then the moved item's follow it.
    await store.grants.deleteWithin(e.to.user, pathOf(e.to));
    if (e.from.user === e.to.user) await store.grants.moveWithin(e.from.user, pathOf(e.from), pathOf(e.to));
    else await store.grants.deleteWithin(e.from.user, pathOf(e.from));
  };
  const unsubscribe = deps.backend.events.subscribe(onEvent);

  /** Who a grant reaches: its user, or its group's members now. */
  const recipientsOf = async (g: Grant): Promise<readonly string[]> => (g.toKind === 'user' ? [g.toName] : ((await store.groups.get(g.toName))?.members ?? []));

  async function owned(principal: Principal, id: string): Promise<Grant> {
    if (principal.kind !== 'user') throw notYours();
    const g = await store.grants.get(id);
    if (!g || g.ownerId !== principal.userId) throw noGrant();
    return g;
  }

  /** The recipient's kind and id, or the one answer for every name the caller cannot share with. */
  async function recipient(principal: UserPrincipal, kind: 'user' | 'group', name: string): Promise<string> {
    if (kind === 'group') {
      const groupId = await store.groups.idOf(name);
      if (!groupId) throw noRecipient();
      return groupId;
    }
    const user = await store.users.getByName(name);
    if (!user || user.disabled || user.id === principal.userId) throw noRecipient();
    return user.id;
  }

  async function create(principal: UserPrincipal, input: { path: string; to: string; permission: Permission }): Promise<Grant> {
    const raw = input.path.replace(/^\//, '');
    const key = parseDecodedStoragePath(raw.includes('/') ? raw : `${raw}/`).key;
    // Only the owner shares an item: asked without the grants (a recipient uses an item, and does not share it on).
    await deps.operations.may(principal, key, 'POST', { throughGrants: false });
    if (key.segments.length === 0) throw new AppError('bad_request', sentence('apiDetail.shareWholeStorage'));
    const entry = await deps.files.stat(key);
    const m = /^(user|group):(.+)$/.exec(input.to);
    if (!m) throw new AppError('bad_request', sentence('apiDetail.shareWithSyntax', { placeholder: '<name>' }));
    const [, kind, name] = m as unknown as [string, 'user' | 'group', string];
    const toId = await recipient(principal, kind, name);
    const grant = {
      id: randomUUID(), ownerId: principal.userId, owner: key.user, path: pathOf(key), isFile: entry.isFile,
      toKind: kind, toId, permission: input.permission, createdAt: deps.clock.now(),
    } as const;
    if (!(await store.grants.create(grant))) throw new AppError('already_exists', `This item is shared with ${input.to} already; change its permission instead.`);
    return { ...grant, toName: name };
  }

  return {
    /**
     * Failed creations are limited per caller (the login throttle's count, `--login-rate-limit` a
     * minute), so names cannot be tried in bulk. Each creation takes a place in the count before it
     * runs and gives it back when it succeeds: concurrent attempts cannot pass the limit, and while
     * the caller is over it every creation is refused, a good name too (else 201 against 429 would
     * still tell names apart).
     */
    async create(principal: Principal, input: { path: string; to: string; permission: Permission }): Promise<Grant> {
      if (principal.kind !== 'user') throw notYours();
      const bucket = `grant:${principal.userId}`;
      const at = deps.clock.now();
      const wait = (await deps.limiter?.hit(bucket, at)) ?? 0;
      if (wait > 0) throw new AppError('rate_limited', `Too many failed attempts to share; try again in ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
      const made = await create(principal, input);
      // The grant is made: a place not given back only counts until it leaves the window.
      await deps.limiter?.release(bucket, at).catch((e: unknown) => deps.onError?.(e));
      return made;
    },

    async listGiven(principal: Principal): Promise<Grant[]> {
      if (principal.kind !== 'user') throw notYours();
      return store.grants.listByOwner(principal.userId);
    },

    async listReceived(principal: Principal): Promise<ReceivedGrant[]> {
      if (principal.kind !== 'user') throw notYours();
      // One entry per item: a user grant and a group grant of the same item show once, with the most it allows.
      const best = new Map<string, Grant>();
      const every = new Map<string, Grant[]>();
      for (const g of await store.grants.listForRecipient(principal.userId)) {
        const id = `${g.owner}/${g.path}`;
        const seen = best.get(id);
        if (!seen || (seen.permission === 'read' && g.permission === 'write')) best.set(id, g);
        every.set(id, [...(every.get(id) ?? []), g]);
      }
      return [...best.entries()].map(([id, g]) => received(g, every.get(id) ?? [g]));
    },

    async setPermission(principal: Principal, id: string, permission: Permission): Promise<Grant> {
      const g = await owned(principal, id);
      await store.grants.setPermission(id, permission);
      // Read-only, the grant no longer keeps its recipients' locks in the owner's tree.
      if (permission === 'read') await endLocksBeyondGrants(store, await recipientsOf(g), g.owner);
      return (await store.grants.get(id)) as Grant;
    },

    /** The owner revokes; a recipient removes a grant made to them by name (a group's grant is the owner's to end). */
    async remove(principal: Principal, id: string): Promise<void> {
      if (principal.kind !== 'user') throw notYours();
      const g = await store.grants.get(id);
      const mine = g && (g.ownerId === principal.userId || (g.toKind === 'user' && g.toId === principal.userId));
      if (!g || !mine) {
        if (g && g.toKind === 'group' && (await store.grants.listForRecipient(principal.userId, g.owner)).some((x) => x.id === id)) {
          throw new AppError('forbidden', 'This item is shared with a group you are in; only its owner can end that.');
        }
        throw noGrant();
      }
      await store.grants.delete(id);
      await endLocksBeyondGrants(store, await recipientsOf(g), g.owner);
    },

    /**
     * The received items as the WebDAV collection `Shared with me` shows them, newest grant first: `<name> (<owner>)`,
     * or, when two items of one owner share a name, `<name> (<owner>, <folder › path>)` for each of them, so every
     * item is reachable and its name does not depend on which grants came first.
     */
    async sharedItems(principal: Principal): Promise<SharedItem[]> {
      const items = (await this.listReceived(principal)).map(({ grant }) => {
        const root = keyOf(grant);
        return { root, isFile: grant.isFile, access: { root, isFile: grant.isFile, permission: grant.permission }, short: `${root.segments.at(-1) ?? ''} (${grant.owner})` };
      });
      const count = new Map<string, number>();
      for (const i of items) count.set(i.short, (count.get(i.short) ?? 0) + 1);
      return items.map(({ root, isFile, access, short }) => {
        if (count.get(short) === 1) return { name: short, root, isFile, access };
        const folder = root.segments.slice(0, -1).join(' › ') || '/';
        return { name: `${root.segments.at(-1) ?? ''} (${root.user}, ${folder})`, root, isFile, access };
      });
    },

    /** The grant that gives `principal` the most on `key` of another user's tree, if any reaches it. */
    async access(principal: Principal | undefined, key: StorageKey): Promise<GrantAccess | undefined> {
      if (principal?.kind !== 'user' || key.user === principal.username) return undefined;
      return bestGrant(await store.grants.listForRecipient(principal.userId, key.user), key);
    },

    close(): void {
      unsubscribe();
    },
  };
}
