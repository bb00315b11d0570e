import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { writerOf, type Principal, type Writer } from '../domain/principal.js';
import { isRoot, isSameOrInside, keyParent, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { Entry, StorageBackend, WriteLook } from '../storage/backend.js';
import type { DavLock } from '../store/dav-locks.js';
import type { DeadProperty, DeadPropertyChange, DeadPropertyTotals } from '../store/dav-properties.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { evaluateIf, type IfHeader } from '../domain/dav-if-header.js';
import { assertTokensHeld, locksOver, parentPath, resourcePath, type WriteScope } from './dav-locks.js';
import type { FilesService } from './files.js';
import type { FolderEtags } from './folder-etags.js';
import type { Door } from './door.js';
import type { UsageService } from './usage.js';
import { storageCall } from './storage-errors.js';

/**
 * The If header of a request, the lock tokens it submits (RFC 4918 §10.4), and the keys of the
 * resources its tagged lists name by URL (read by the front end; undefined: not a resource here).
 */
export type DavConditions = { readonly header: IfHeader | undefined; readonly tokens: ReadonlySet<string>; readonly resources: ReadonlyMap<string, StorageKey | undefined> };

/** The 403 of a COPY or MOVE whose Destination is outside every tree the caller may write. */
export const destinationOutside = () => new AppError('forbidden', 'The Destination must lie inside your own storage or a folder shared with you for writing.');

/** What a LOCK asks for: a new lock, or the refresh of the locks its If header names (no body). */
export type LockRequest =
  | { readonly kind: 'refresh'; readonly timeoutSeconds: number }
  | { readonly kind: 'new'; readonly scope: 'exclusive' | 'shared'; readonly depth: '0' | 'infinity'; readonly owner: string; readonly timeoutSeconds: number };

export type DavServiceDeps = {
  readonly files: FilesService;
  readonly usage: UsageService;
  readonly backend: StorageBackend;
  readonly store: MetadataStore;
  readonly clock: Clock;
  /** Bytes free for new files, when the backend can tell (local disk); RFC 4331 quota-available-bytes. */
  readonly freeBytes?: () => Promise<number | undefined>;
  /** Per user: dead properties (how many, their size) and live locks (docs/webdav.md "Limits"). */
  readonly limits: { readonly properties: number; readonly propertySize: number; readonly locks: number };
  /**
   * The one door: each method asks the layer for the key it acts on as the caller (`as(principal).may`),
   * whatever front end calls it (WebDAV, SFTP), and for every other key a request names (a Destination,
   * a lock taken through a grant).
   */
  readonly operations: Door;
  /** Folder ETags (the change journal's tree ETags; --changes off: the backend's own). */
  readonly folderEtags: FolderEtags;
};

export type DavService = ReturnType<typeof createDavService>;

/** Over a per-user WebDAV limit: the one error for dead properties and locks (RFC 4918 §9.2.1, §9.10.6: 507). */
const davLimit = (what: string) => new AppError('dav_limit_reached', `${what} (docs/webdav.md "Limits"). Remove some first.`);

/**
 * The rules of WebDAV over a user's tree (RFC 4918), for the /dav/ front end
 * (src/routes/dav.ts), which only translates HTTP and XML: the order of
 * checks (target, preconditions such as parent and Overwrite, locks → 423,
 * the If header → 412, then the change), locks and dead properties (kept in
 * the metadata store, so every worker and node sees them), and what COPY and
 * MOVE do to both. Bytes go through the files service, so quotas and
 * collisions are the storage API's.
 */
export function createDavService(deps: DavServiceDeps) {
  const { files, backend, store, clock } = deps;
  const { folderEtags } = deps;
  const propertyLimit = { count: deps.limits.properties, size: deps.limits.propertySize };

  /**
   * A COPY duplicates the source's dead properties: refused before anything
   * is copied when they would not fit (checked ahead, so concurrent
   * requests may pass the limit by what they add, as with PROPPATCH on
   * PostgreSQL).
   */
  async function roomForCopies(user: string, adding: DeadPropertyTotals, freed: DeadPropertyTotals): Promise<void> {
    if (adding.count === 0) return;
    const now = await store.davProperties.totals(user);
    if (now.count - freed.count + adding.count > propertyLimit.count || now.size - freed.size + adding.size > propertyLimit.size) {
      throw davLimit(`The copy's dead properties would pass the ${deps.limits.properties} properties of ${deps.limits.propertySize} characters you may keep`);
    }
  }

  /** 423 unless every lock in the way has its token submitted. */
  async function checkLocks(user: string, scopes: readonly WriteScope[], cond: DavConditions, principal: Principal, extra: readonly string[] = []): Promise<void> {
    const locks = await locksOver(store.davLocks, user, scopes, clock.now());
    if (locks.length === 0) return;
    assertTokensHeld(locks, new Set([...cond.tokens, ...extra]), principal.username);
  }

  /** 412 when an If header is present and false (RFC 4918 §10.4). */
  async function checkIf(cond: DavConditions, key: StorageKey): Promise<void> {
    if (!cond.header) return;
    const states = new Map<string, { etag?: string; lockTokens: string[] } | undefined>();
    const resources = [undefined, ...cond.header.lists.map((l) => l.resource)];
    for (const r of resources) {
      const id = r ?? '';
      if (states.has(id)) continue;
      const k = r === undefined ? key : cond.resources.get(r);
      states.set(id, k && k.user === key.user ? await stateOf(k) : undefined);
    }
    if (!evaluateIf(cond.header, (r) => states.get(r ?? ''))) {
      throw new AppError('precondition_failed', 'The If header does not match the current state (lock tokens or ETags) of the resource.');
    }
  }


  async function stateOf(key: StorageKey): Promise<{ etag?: string; lockTokens: string[] }> {
    const [entry, locks] = await Promise.all([storageCall(() => backend.stat(key)), store.davLocks.covering(key.user, resourcePath(key), clock.now())]);
    return { etag: entry?.etag, lockTokens: locks.map((l) => l.token) };
  }

  const noParentCollection = () => new AppError('not_a_directory', 'The parent collection does not exist; create it first (MKCOL).');

  /** The parent collection must exist (RFC 4918 §9.7.1, §9.3.1: 409 otherwise). */
  async function assertParentCollection(key: StorageKey): Promise<void> {
    const parent = await storageCall(() => backend.stat(keyParent(key)));
    if (!parent || parent.isFile) throw noParentCollection();
  }

  /**
   * COPY or MOVE between two owners' trees: no backend moves across roots, so the bytes are copied
   * under the destination owner's quota (each file committed whole, as an upload) and, for a MOVE,
   * the source is then removed. Dead properties stay with their owner's tree (they are not carried
   * across); the source's locks and properties go with it.
   */
  async function copyAcross(from: StorageKey, to: StorageKey, o: { source: Entry; existing: Entry | undefined; move: boolean; depth: string; writer: Writer }): Promise<{ created: boolean }> {
    if (!o.move && o.depth === '0' && !o.source.isFile) {
      if (o.existing) {
        await files.removeReplaced(to, o.existing, o.source);
        await forget(to.user, resourcePath(to));
      }
      await storageCall(() => backend.mkdir(to, { parents: false, existOk: true }));
    } else {
      await files.copyReplacing(from, to, { source: o.source, replacing: o.existing, writer: o.writer, removed: () => forget(to.user, resourcePath(to)) });
    }
    if (o.move) await storageCall(() => backend.delete(from, { recursive: true })); // its locks and properties end with it (dav-records.ts)
    return { created: !o.existing };
  }

  /** Locks and dead properties of a tree that no longer exists. */
  async function forget(user: string, path: string): Promise<void> {
    await store.davLocks.deleteWithin(user, path);
    await store.davProperties.deleteTree(user, path);
  }

  async function deadProperties(user: string, path: string, withMembers: boolean) {
    const byPath = new Map<string, DeadProperty[]>();
    byPath.set(path, await store.davProperties.list(user, path));
    if (withMembers) {
      for (const p of await store.davProperties.listChildren(user, path)) byPath.set(p.path, [...(byPath.get(p.path) ?? []), p]);
    }
    return byPath;
  }

  /** The locks that apply to the resource (those covering it) and to each member (inherited depth-infinity ones plus its own). */
  async function lockMap(user: string, path: string, withMembers: boolean, now: number): Promise<(p: string) => DavLock[]> {
    const [covering, within] = await Promise.all([store.davLocks.covering(user, path, now), withMembers ? store.davLocks.within(user, path, now) : []]);
    const inherited = covering.filter((l) => l.depth === 'infinity');
    const own = new Map<string, DavLock[]>();
    for (const l of within) if (l.path !== path) own.set(l.path, [...(own.get(l.path) ?? []), l]);
    return (p) => {
      if (p === path) return covering;
      const mine = own.get(p);
      return mine ? [...inherited, ...mine] : inherited;
    };
  }

  /**
   * RFC 4331: used bytes from the usage figures; available is what the quota
   * leaves (or the disk's free space when it is smaller, or alone without a quota).
   */
  async function quotaOf(user: string): Promise<{ used: number; available?: number }> {
    const [{ used, quota }, free] = await Promise.all([deps.usage.get(user), deps.freeBytes?.()]);
    const left = quota === undefined ? undefined : Math.max(0, quota - used);
    const available = left === undefined ? free : free === undefined ? left : Math.min(left, free);
    return { used: Math.max(0, used), available };
  }

  return {
    checkIf,

    /** GET and HEAD: the entry, after the If header. */
    async entryForRead(key: StorageKey, cond: DavConditions, principal: Principal): Promise<Entry> {
      const ops = deps.operations.as(principal);
      await ops.may(key, 'GET');
      await checkIf(cond, key);
      return ops.stat(key);
    },

    /** PUT: creates or atomically replaces a file; `created` tells 201 from 204. */
    async put(key: StorageKey, body: Readable, opts: { cond: DavConditions; principal: Principal; declaredSize: number | undefined; modified?: Date; looked?: WriteLook }): Promise<{ created: boolean; etag: string | undefined }> {
      await deps.operations.as(opts.principal).may(key, 'PUT');
      if (isRoot(key)) throw new AppError('method_not_allowed', 'PUT cannot replace a collection.', { headers: { allow: 'OPTIONS, PROPFIND, PROPPATCH, LOCK, UNLOCK' } });
      // Asked where the write asks (on S3 the index, not the bucket: CONTRACT "Backends and nodes"), unless the
      // caller has just asked (an SFTP OPEN, whose upload starts with it): a second look finds the same.
      const { at, parent, aboveIndexed } = opts.looked ?? (await storageCall(() => backend.lookBeforeWrite(key)));
      if (at === 'folder') throw new AppError('method_not_allowed', 'A collection is at this path; PUT cannot replace it.');
      const existing = at === 'file';
      if (!existing && parent !== 'folder') throw noParentCollection();
      await checkLocks(key.user, [{ path: resourcePath(key), member: !existing }], opts.cond, opts.principal);
      await checkIf(opts.cond, key);
      const declared = opts.declaredSize;
      if (files.maxUploadBytes !== undefined && declared !== undefined && declared > files.maxUploadBytes) {
        throw new AppError('too_large', `The upload is larger than this server accepts (${files.maxUploadBytes} bytes).`);
      }
      // The entry of what this PUT wrote (a stat afterwards cost one more store request, and could see a later writer's file).
      // A new resource's looks (its parent a collection, nothing at its name) are not made again by the write.
      const written = await files.writeFile(key, body, { sizeHint: declared, freeNameInFolder: !existing, aboveIndexed, writer: writerOf(opts.principal), modified: opts.modified });
      return { created: !existing, etag: written.etag };
    },

    /** A stored file's time set by a client: a lock on it (or a folder above) refuses it as it would a PUT. */
    async redate(key: StorageKey, modified: Date, cond: DavConditions, principal: Principal): Promise<void> {
      await deps.operations.as(principal).may(key, 'PUT');
      await checkLocks(key.user, [{ path: resourcePath(key), member: false }], cond, principal);
      await checkIf(cond, key);
      await files.redate(key, modified);
    },

    /** DELETE: the tree with its locks and dead properties. */
    async delete(key: StorageKey, cond: DavConditions, principal: Principal): Promise<void> {
      await deps.operations.as(principal).may(key, 'DELETE');
      if (isRoot(key)) throw new AppError('forbidden', 'The root of your storage cannot be deleted.');
      await files.statOrThrow(key);
      const path = resourcePath(key);
      await checkLocks(key.user, [{ path, tree: true, member: true }], cond, principal);
      await checkIf(cond, key);
      await files.delete(key); // its locks and dead properties end with it (dav-records.ts)
    },

    /** MKCOL: one new collection whose parent exists. */
    async mkcol(key: StorageKey, cond: DavConditions, principal: Principal): Promise<void> {
      await deps.operations.as(principal).may(key, 'MKCOL');
      if (await storageCall(() => backend.stat(key))) throw new AppError('method_not_allowed', 'Something already exists at this path.', { headers: { allow: 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, LOCK, UNLOCK' } });
      await assertParentCollection(key);
      await checkLocks(key.user, [{ path: resourcePath(key), member: true }], cond, principal);
      await checkIf(cond, key);
      await storageCall(() => backend.mkdir(key, { parents: false, existOk: false }), { already_exists: 'Something already exists at this path.' });
    },

    /**
     * COPY and MOVE (RFC 4918 §9.8, §9.9) onto `to`, the key the front end read from the Destination
     * header; `created` tells 201 from 204.
     */
    async copyOrMove(
      from: StorageKey,
      to: StorageKey,
      opts: { depth: '0' | '1' | 'infinity'; overwrite: boolean; move: boolean; cond: DavConditions; principal: Principal },
    ): Promise<{ created: boolean }> {
      const { move, depth, cond, principal } = opts;
      // Both keys, through a grant where one reaches them: a move takes the source away, and either writes the Destination.
      await deps.operations.may(principal, from, move ? 'MOVE' : 'COPY');
      await deps.operations.may(principal, to, 'MOVE').catch((e: unknown) => {
        // Another user's tree without a writable grant: the 403 a Destination outside one's storage has always had.
        throw e instanceof AppError && e.code === 'unauthorized' ? destinationOutside() : e;
      });
      if (depth === '1' || (move && depth !== 'infinity')) throw new AppError('bad_request', `${move ? 'MOVE' : 'COPY'} takes Depth: infinity${move ? '' : ' or 0'}.`);
      const source = await files.statOrThrow(from);
      if (isRoot(from) && move) throw new AppError('forbidden', 'The root of your storage cannot be moved.');
      if (isSameOrInside(to, from) && (move || !source.isFile)) throw new AppError('forbidden', 'The Destination is the source itself or lies inside it.');
      if (isRoot(to)) throw new AppError('forbidden', 'The root of your storage cannot be replaced.');
      await assertParentCollection(to);
      const existing = await storageCall(() => backend.stat(to));
      if (existing && !opts.overwrite) throw new AppError('precondition_failed', 'The Destination exists and Overwrite is F.');
      const scopes: WriteScope[] = [{ path: resourcePath(to), tree: !!existing, member: true }];
      const fromScope: WriteScope = { path: resourcePath(from), tree: true, member: true };
      if (to.user !== from.user) {
        // Between two owners' trees (one's own and a shared folder): each tree's locks, then a copy (and a delete).
        await checkLocks(to.user, scopes, cond, principal);
        if (move) await checkLocks(from.user, [fromScope], cond, principal);
        await checkIf(cond, from);
        return copyAcross(from, to, { source, existing, move, depth, writer: writerOf(principal) });
      }
      if (move) scopes.push(fromScope);
      await checkLocks(from.user, scopes, cond, principal);
      await checkIf(cond, from);
      const replace = async () => {
        // A copy's bytes go through the files service, which holds them to the owner's quota (507, nothing kept).
        const copying = !move && !(depth === '0' && !source.isFile);
        // A copy's dead properties must fit before anything changes (the replaced destination's go first, so they make room).
        const ownProps = !move && depth === '0' && !source.isFile ? await store.davProperties.list(from.user, resourcePath(from)) : [];
        const propertiesFit = async () => {
          if (move) return;
          const adding = depth === '0' && !source.isFile ? { count: ownProps.length, size: ownProps.reduce((n, p) => n + [...p.xml].length, 0) } : await store.davProperties.totals(from.user, resourcePath(from));
          await roomForCopies(to.user, adding, existing ? await store.davProperties.totals(to.user, resourcePath(to)) : { count: 0, size: 0 });
        };
        if (copying) {
          // RFC 4918 §9.8.4: an overwritten destination is deleted first, with its locks and properties.
          await files.copyReplacing(from, to, { source, replacing: existing ?? undefined, writer: writerOf(principal), beforeChange: propertiesFit, removed: () => forget(to.user, resourcePath(to)) });
          await store.davProperties.copyTree(from.user, resourcePath(from), resourcePath(to));
          return;
        }
        await propertiesFit();
        if (existing) {
          // RFC 4918 §9.8.4 / §9.9.3: an overwritten destination is deleted first, with its locks and
          // properties (its bytes kept as a version or in the trash when those are on: files.removeReplaced).
          await files.removeReplaced(to, existing, source);
          await forget(to.user, resourcePath(to));
        }
        if (move) {
          // Its dead properties go along and its locks end (dav-records.ts, as for a move by any front end).
          await storageCall(() => backend.move(from, to, { overwrite: true }));
        } else {
          await storageCall(() => backend.mkdir(to, { parents: false, existOk: true }));
          if (ownProps.length > 0) await store.davProperties.patch(to.user, resourcePath(to), ownProps.map((prop) => ({ op: 'set', prop })));
        }
      };
      await replace();
      return { created: !existing };
    },

    /**
     * What a PROPFIND shows of a resource (and, with members, of its members): the entry,
     * the members as sorted pages, dead properties and locks by path, and the quota figures.
     */
    async propfind(key: StorageKey, principal: Principal, opts: { withMembers: boolean; dead: boolean; locks: boolean; quota: boolean }) {
      const path = resourcePath(key);
      // Folders carry ETags that change with anything beneath them (src/services/folder-etags.ts).
      const ops = deps.operations.as(principal);
      const entry = await folderEtags.one(key.user, path, await ops.stat(key));
      // Members in the listing order straight from the backend (sorted once), streamed page by page by the front end.
      const listed = opts.withMembers && !entry.isFile ? await ops.listWithEtags(key) : undefined;
      const members = listed && folderEtags.pages(key.user, path, listed);
      const withMembers = members !== undefined;
      const now = clock.now();
      const [dead, locks, quota] = await Promise.all([
        opts.dead ? deadProperties(key.user, path, withMembers) : new Map<string, DeadProperty[]>(),
        opts.locks ? lockMap(key.user, path, withMembers, now) : (): DavLock[] => [],
        opts.quota ? quotaOf(key.user) : undefined,
      ]);
      return { entry, members, path, dead, locks, quota, now };
    },

    /**
     * PROPPATCH: all or nothing (RFC 4918 §9.2). `protectedNames` are live properties the request tried to
     * change: then nothing changes and the front end reports them (403) and the rest (424).
     */
    async proppatch(key: StorageKey, patches: readonly DeadPropertyChange[], opts: { anyProtected: boolean; cond: DavConditions; principal: Principal }): Promise<Entry> {
      await deps.operations.as(opts.principal).may(key, 'PROPPATCH');
      await files.statOrThrow(key);
      const path = resourcePath(key);
      await checkLocks(key.user, [{ path }], opts.cond, opts.principal);
      await checkIf(opts.cond, key);
      if (!opts.anyProtected) {
        const done = await store.davProperties.patch(key.user, path, patches, propertyLimit);
        if (!done) throw davLimit(`You may keep at most ${deps.limits.properties} dead properties of ${deps.limits.propertySize} characters in all`);
      }
      return files.statOrThrow(key);
    },

    /** LOCK: a new lock (201 when it created an empty resource) or the refresh of held ones (200). */
    async lock(key: StorageKey, ask: LockRequest, cond: DavConditions, principal: Principal): Promise<{ status: 200 | 201; locks: DavLock[]; now: number; created?: DavLock }> {
      await deps.operations.as(principal).may(key, 'LOCK');
      const path = resourcePath(key);
      const now = clock.now();
      if (ask.kind === 'refresh') {
        // A refresh (RFC 4918 §9.10.2): the lock is named in the If header.
        if (cond.tokens.size === 0) throw new AppError('bad_request', 'A LOCK without a body refreshes a lock: name it in an If header.');
        await checkIf(cond, key);
        const covering = await store.davLocks.covering(key.user, path, now);
        const held = covering.filter((l) => cond.tokens.has(l.token));
        if (held.length === 0) throw new AppError('precondition_failed', 'No lock named in the If header applies to this resource.');
        const refreshed = (await Promise.all(held.map((l) => store.davLocks.refresh(l.token, ask.timeoutSeconds, now)))).filter((l): l is DavLock => l !== undefined);
        return { status: 200, locks: refreshed, now };
      }
      const entry = await storageCall(() => backend.stat(key));
      if (!entry) {
        await assertParentCollection(key);
        // Creating the empty resource changes its parent; locks on the target itself only conflict (below), as shared locks stack.
        await checkLocks(key.user, [{ path: parentPath(path) }], cond, principal);
      }
      await checkIf(cond, key);
      const lock: DavLock = {
        token: `urn:uuid:${randomUUID()}`,
        user: key.user,
        path,
        depth: ask.depth === '0' || entry?.isFile ? 0 : 'infinity',
        scope: ask.scope,
        owner: ask.owner,
        principal: principal.username,
        timeoutSeconds: ask.timeoutSeconds,
        createdAt: now,
        expiresAt: now + ask.timeoutSeconds * 1000,
      };
      const made = await store.davLocks.create(lock, now, deps.limits.locks);
      if (!made.created && 'tooMany' in made) throw davLimit(`You may hold at most ${deps.limits.locks} locks at once`);
      if (!made.created) throw new AppError('locked', `"/${path}" is already locked by a conflicting lock.`);
      // Asked again now that the row exists: a grant ended meanwhile either shows here, or ended after
      // the insert, and then its end found this lock and removed it (endLocksBeyondGrants).
      await deps.operations.may(principal, key, 'LOCK').catch(async (e: unknown) => {
        await store.davLocks.delete(lock.token);
        throw e;
      });
      if (!entry) {
        // RFC 4918 §7.3: LOCK on an unmapped URL creates an empty resource.
        await storageCall(() => backend.write(key, Readable.from([]), { ifExists: 'fail' })).catch((e: unknown) => {
          if (!(e instanceof AppError && e.code === 'already_exists')) throw e;
        });
      }
      return { status: entry ? 200 : 201, locks: [lock], now, created: lock };
    },

    /**
     * UNLOCK: the lock's own principal removes it, and so may the owner of the tree it is in (a lock a
     * grant's recipient took must never hold the owner's files against them); only through a resource
     * it applies to.
     */
    async unlock(key: StorageKey, token: string, principal: Principal): Promise<void> {
      await deps.operations.as(principal).may(key, 'UNLOCK');
      const path = resourcePath(key);
      const lock = await store.davLocks.get(token, clock.now());
      const applies = lock && lock.user === key.user && (lock.path === path || (lock.depth === 'infinity' && (lock.path === '' || path.startsWith(`${lock.path}/`))));
      if (!lock || !applies) throw new AppError('lock_token_mismatch', 'That lock token does not name a lock on this resource.');
      if (lock.principal !== principal.username && lock.user !== principal.username) throw new AppError('forbidden', 'That lock belongs to another user.');
      await store.davLocks.delete(token);
    },

    /** The top of /dav/: the caller's own root. */
    async ownRoot(principal: Principal): Promise<{ key: StorageKey; entry: Entry; now: number }> {
      const key = { user: principal.username, segments: [] };
      return { key, entry: await deps.operations.as(principal).stat(key), now: clock.now() };
    },
  };
}
