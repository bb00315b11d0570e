import { createHmac } from 'node:crypto';
import { isUsedUp, MAX_DOWNLOAD_LIMIT, unitsFor, UNITS_PER_DOWNLOAD } from '../domain/download-units.js';
import { AppError } from '../domain/errors.js';
import { collisionName, nameProblem } from '../domain/names.js';
import type { Principal } from '../domain/principal.js';
import { keyName, parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, safeEqual } from '../lib/crypto.js';
import { isStorageError, type Entry, type StorageBackend } from '../storage/backend.js';
import type { StorageEvent } from '../storage/events.js';
import type { Share } from '../domain/share.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { FilesService, UploadPart } from './files.js';
import type { Door } from './door.js';
import type { PasswordHasher } from './passwords.js';
import { fromStorageError, storageCall } from './storage-errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Default lifetime of a share link: 7 days (CONTRACT "Share links"). */
export const DEFAULT_EXPIRES_IN = 604_800;
/** Longest lifetime a client may ask for: 100 years (a bound only so times stay well inside 64 bits). */
export const MAX_EXPIRES_IN = 100 * 365 * 86_400;
export const MAX_SHARE_PASSWORD_LENGTH = 1024;
/** 24 random bytes = 192 bits, 32 base64url characters. */
const ID_BYTES = 24;
const ID_RE = /^[A-Za-z0-9_-]{32}$/;
/** How long a password cookie lasts at most (it never outlives its share). */
export const SHARE_COOKIE_MAX_AGE = 86_400;
/** How many `name (n)` an upload-only link's folder upload tries; far beyond any real folder. */
const MAX_DROP_COLLISIONS = 10_000;
/** How long downloads of unlimited links wait in memory before they are written. */
const FLUSH_MS = 1000;

/** The one answer of every dead link, whatever the cause: nothing tells them apart. */
export const deadLink = (): AppError => new AppError('not_found', 'This link does not exist or is no longer available.');

export const isShareId = (id: string): boolean => ID_RE.test(id);

/** What a visitor's request works on: the live share, its target's key and entry. */
/** `entry` is the target's, when it was looked at (always by resolve()). */
export type LiveShare = { readonly share: Share; readonly key: StorageKey; readonly entry: Entry | undefined };

/** Where a visitor's path below a live share leads: the share, the key, and the entry there (undefined when nothing is). */
export type SharePlace = { readonly live: LiveShare; readonly key: StorageKey; readonly entry: Entry | undefined };

export type CreateShareInput = {
  path: string;
  expiresIn: number | null | undefined;
  password: string | null | undefined;
  maxDownloads: number | null | undefined;
  uploadOnly: boolean | undefined;
};

export type ShareService = ReturnType<typeof createShareService>;

/**
 * The shared key. A shared folder bounds its keys (StorageKey.within): below it, a symbolic link on disk
 * is followed only while it stays inside the shared folder, never out of it (issue 27).
 */
const keyOf = (share: Share): StorageKey => {
  const segments = share.path === '' ? [] : share.path.split('/');
  return share.isFile ? { user: share.owner, segments } : { user: share.owner, segments, within: segments.length };
};
const pathOf = (key: StorageKey): string => key.segments.join('/');
/** The key `segments` name below a share's target (checked segments: never outside it, nor out through a link). */
const keyBelow = (root: StorageKey, segments: readonly string[]): StorageKey =>
  segments.length === 0 ? root : { user: root.user, segments: [...root.segments, ...segments], within: root.within ?? root.segments.length };

/** Checks the options of a new share; pure, table-tested in shares.test.ts. */
export function validateShareOptions(input: Omit<CreateShareInput, 'path'>, isFile: boolean): void {
  const { expiresIn, password, maxDownloads, uploadOnly } = input;
  if (expiresIn !== undefined && expiresIn !== null && (!Number.isSafeInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN)) {
    throw new AppError('bad_request', sentence('apiDetail.expiresIn', { max: MAX_EXPIRES_IN }));
  }
  if (maxDownloads !== undefined && maxDownloads !== null && (!Number.isSafeInteger(maxDownloads) || maxDownloads < 1 || maxDownloads > MAX_DOWNLOAD_LIMIT)) {
    throw new AppError('bad_request', sentence('apiDetail.maxDownloads', { max: MAX_DOWNLOAD_LIMIT }));
  }
  if (password !== undefined && password !== null && (password.length === 0 || password.length > MAX_SHARE_PASSWORD_LENGTH)) {
    throw new AppError('bad_request', sentence('apiDetail.sharePassword', { max: MAX_SHARE_PASSWORD_LENGTH }));
  }
  if (uploadOnly && isFile) throw new AppError('bad_request', sentence('apiDetail.uploadOnlyFile'));
  if (uploadOnly && maxDownloads !== undefined && maxDownloads !== null) {
    throw new AppError('bad_request', sentence('apiDetail.uploadOnlyLimit'));
  }
}

/**
 * The keys below a shared folder that a visitor may address: the decoded
 * sub-path's segments checked exactly as storage paths are (no `.`/`..`, no
 * empty segment, no NUL or backslash). Throws invalid_path.
 */
export function subPathSegments(decoded: string): string[] {
  if (decoded === '') return [];
  const parts = decoded.split('/');
  if (parts[parts.length - 1] === '') parts.pop();
  for (const s of parts) {
    if (s === '') throw new AppError('invalid_path', sentence('apiDetail.pathEmptySegment'));
    const problem = nameProblem(s);
    if (problem) throw new AppError('invalid_path', sentence('apiDetail.pathInvalid', { problem }));
  }
  return parts;
}

/**
 * The sub-path of a share URL (the raw text after `<id>/`), decoded and
 * checked segment by segment; no text or a bare slash is the link's own item.
 */
export function decodeSharePath(rest: string | undefined): { segments: string[]; trailingSlash: boolean } {
  if (rest === undefined || rest === '') return { segments: [], trailingSlash: true };
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw new AppError('invalid_path', sentence('apiDetail.pathNotUtf8'));
  }
  return { segments: subPathSegments(decoded), trailingSlash: decoded.endsWith('/') };
}

/** The first bytes of a file shown as a text preview on a share page. */
export const TEXT_PREVIEW_BYTES = 64 * 1024;

/**
 * Share links: creation and listing for owners, and for visitors the one
 * question "is this link alive, and what does it name?". A link ends when it
 * expires, is revoked, is used up, or its target is deleted or moved (the
 * storage events delete its row) or its owner removed (the row goes with the
 * user).
 */
export function createShareService(deps: {
  store: MetadataStore;
  backend: StorageBackend;
  files: FilesService;
  /** The operation layer's check: a link is made of a key in the maker's own tree (a grant lets its recipient use an item, not share it on). */
  operations: Pick<Door, 'may'>;
  hasher: PasswordHasher;
  clock: Clock;
  secret: Buffer;
  onError?: (e: unknown) => void;
}) {
  const { store, clock } = deps;
  const onError = deps.onError ?? (() => undefined);

  const isAlive = (s: Share, now: number) => (s.expiresAt === undefined || s.expiresAt > now) && !isUsedUp(s.downloadUnits, s.maxDownloads);

  // A deleted or moved target ends its shares and those below it. The listener only starts
  // the delete: resolve() also checks that the target is there, so the link is dead at once.
  const onEvent = (e: StorageEvent) => {
    const ends: StorageKey[] = e.type === 'deleted' ? [e.key] : e.type === 'moved' ? [e.from, e.to] : [];
    for (const key of ends) store.shares.deleteWithin(key.user, pathOf(key)).catch(onError);
  };
  const unsubscribe = deps.backend.events.subscribe(onEvent);

  // Downloads of unlimited links, not yet written: share id → units.
  let pending = new Map<string, number>();
  let flushTimer: NodeJS.Timeout | undefined;
  const flush = async () => {
    flushTimer = undefined;
    const batch = pending;
    pending = new Map();
    await Promise.all([...batch].map(([id, n]) => store.shares.addUnits(id, n).catch(onError)));
  };

  const cookieMac = (share: Share, exp: number) =>
    createHmac('sha256', deps.secret).update(`share-auth\0${share.id}\0${exp}\0${share.passwordHash ?? ''}`).digest('base64url');

  return {
    async create(principal: Principal, input: CreateShareInput): Promise<Share> {
      if (principal.kind !== 'user') throw new AppError('unauthorized', 'A valid access token is required.');
      const raw = input.path.replace(/^\//, '');
      const key = parseDecodedStoragePath(raw.includes('/') ? raw : `${raw}/`).key;
      await deps.operations.may(principal, key, 'POST', { throughGrants: false });
      const entry = await deps.files.stat(key);
      validateShareOptions(input, entry.isFile);
      const now = clock.now();
      const expiresIn = input.expiresIn === undefined ? DEFAULT_EXPIRES_IN : input.expiresIn;
      const share: Share = {
        id: randomToken('', ID_BYTES),
        ownerId: principal.userId,
        owner: key.user,
        path: pathOf(key),
        isFile: entry.isFile,
        uploadOnly: input.uploadOnly ?? false,
        passwordHash: input.password ? await deps.hasher.hash(input.password) : undefined,
        maxDownloads: input.maxDownloads ?? undefined,
        downloadUnits: 0,
        expiresAt: expiresIn === null ? undefined : now + expiresIn * 1000,
        createdAt: now,
      };
      await store.shares.create(share);
      return share;
    },

    async list(principal: Principal): Promise<Share[]> {
      if (principal.kind !== 'user') return [];
      if (pending.size > 0) await flush();
      return store.shares.listByOwner(principal.userId);
    },

    /** Another user's id or an unknown one → the same 404. */
    async revoke(principal: Principal, id: string): Promise<void> {
      if (principal.kind !== 'user' || !isShareId(id) || !(await store.shares.delete(id, principal.userId))) {
        throw new AppError('not_found', 'You have no share link with this id.');
      }
    },

    /**
     * The live share behind `id`, or the dead-link 404: unknown, expired, revoked, used up, or its
     * owner disabled (the share authenticator's question; the target is looked at by open()).
     */
    async find(id: string): Promise<Share> {
      if (!isShareId(id)) throw deadLink();
      const share = await store.shares.get(id);
      if (!share || share.ownerDisabled || !isAlive(share, clock.now())) throw deadLink();
      return share;
    },

    /** The live share behind `id` with its target, or the dead-link 404 (also when the target is gone or changed kind). */
    async resolve(id: string): Promise<LiveShare> {
      return (await this.open(await this.find(id), [])).live;
    },

    /**
     * What `segments` address below a live share (entry undefined when
     * nothing is there; always for sub-paths of a file share). A found
     * sub-path proves the shared folder is there, so the common case costs
     * one stat; only a miss looks at the share's own target.
     */
    async open(share: Share, segments: readonly string[]): Promise<SharePlace> {
      const root = keyOf(share);
      if (segments.length > 0 && !share.isFile) {
        const key = keyBelow(root, segments);
        const entry = await storageCall(() => deps.backend.stat(key)).catch((e: unknown) => {
          if (e instanceof AppError && (e.code === 'not_found' || e.code === 'not_a_directory')) return undefined;
          throw e;
        });
        if (entry) return { live: { share, key: root, entry: undefined }, key, entry };
      }
      const rootEntry = await storageCall(() => deps.backend.stat(root));
      if (!rootEntry || rootEntry.isFile !== share.isFile) throw deadLink();
      const live = { share, key: root, entry: rootEntry };
      return segments.length === 0 ? { live, key: root, entry: rootEntry } : { live, key: live.key, entry: undefined };
    },

    /**
     * Counts an answer about to send `bytes` of a file, zip or thumbnail
     * through the link, of something `size` bytes long (a thumbnail: of its
     * file): bytes ÷ size of a download (src/domain/download-units.ts).
     * A limited link claims it before the first byte with one conditional
     * UPDATE (exact across nodes; the dead-link 404 when it would take the
     * count past the limit) and gets back, through the returned `settle`,
     * what an interrupted answer did not send, so a resumed download counts
     * once in all. An unlimited link's count is only for the owner's
     * listing: added up here from what was sent and written in batches
     * (FLUSH_MS), keeping a visitor's GET free of a database write.
     */
    async charge(share: Share, bytes: number, size: number): Promise<(sent: number) => void> {
      if (share.maxDownloads === undefined) {
        return (sent) => {
          const units = unitsFor(Math.min(sent, bytes), size);
          if (units === 0) return;
          pending.set(share.id, (pending.get(share.id) ?? 0) + units);
          flushTimer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
        };
      }
      const units = unitsFor(bytes, size);
      if (!(await store.shares.claimUnits(share.id, units))) throw deadLink();
      let settled = false;
      return (sent) => {
        if (settled) return;
        settled = true;
        const back = units - unitsFor(Math.min(sent, bytes), size);
        if (back > 0) store.shares.refundUnits(share.id, back).catch(onError);
      };
    },

    /** Counts a whole download of a link without a limit (the fast read path serves only those). */
    countWhole(share: Share): void {
      pending.set(share.id, (pending.get(share.id) ?? 0) + UNITS_PER_DOWNLOAD);
      flushTimer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
    },

    checkPassword: (share: Share, password: string): Promise<boolean> =>
      share.passwordHash === undefined ? Promise.resolve(true) : deps.hasher.verify(password, share.passwordHash),

    /** A cookie value proving the password was given: `<expiry s>.<HMAC>`, bound to the share and its password hash. */
    cookieFor(share: Share): { value: string; maxAge: number } {
      const now = Math.floor(clock.now() / 1000);
      const until = share.expiresAt === undefined ? Infinity : Math.floor(share.expiresAt / 1000);
      const maxAge = Math.max(1, Math.min(SHARE_COOKIE_MAX_AGE, until - now));
      const exp = now + maxAge;
      return { value: `${exp}.${cookieMac(share, exp)}`, maxAge };
    },

    /** True when the share has no password or one of `values` proves it. */
    unlocked(share: Share, values: readonly string[]): boolean {
      if (share.passwordHash === undefined) return true;
      const now = clock.now() / 1000;
      return values.some((v) => {
        const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(v);
        if (!m || Number(m[1]) <= now) return false;
        return safeEqual(m[2] as string, cookieMac(share, Number(m[1])));
      });
    },

    /**
     * Where an upload to `segments` below an upload-only link goes, with
     * the answers never depending on what exists there (issue 27): the
     * link's own folder for no sub-path; else a new folder claimed for the
     * first segment, with a collision suffix when the name is taken by
     * anything (a file, a folder, a link: `in (1)`), and the rest made
     * inside it. Nothing that exists is entered, replaced or told about.
     * `abandon` removes the claimed folder when the upload fails, so a
     * refused upload creates nothing.
     */
    async dropFolder(live: LiveShare, segments: readonly string[]): Promise<{ key: StorageKey; abandon: () => Promise<void> }> {
      if (segments.length === 0) return { key: live.key, abandon: async () => undefined };
      const first = segments[0] as string;
      for (let n = 0; n < MAX_DROP_COLLISIONS; n++) {
        const claimed = keyBelow(live.key, [collisionName(first, n)]);
        try {
          await deps.backend.mkdir(claimed, { parents: false, existOk: false });
        } catch (e) {
          if (isStorageError(e, 'already_exists')) continue;
          throw fromStorageError(e);
        }
        const abandon = () => deps.backend.delete(claimed, { recursive: true }).catch(onError);
        const key = keyBelow(live.key, [claimed.segments[claimed.segments.length - 1] as string, ...segments.slice(1)]);
        if (segments.length > 1) {
          await storageCall(() => deps.backend.mkdir(key, { parents: true, existOk: true })).catch(async (e: unknown) => {
            await abandon();
            throw e;
          });
        }
        return { key, abandon };
      }
      throw new AppError('already_exists', 'No free name for the uploaded folder.');
    },

    /**
     * A visitor's upload into an upload-only link: new files only, never a replacement, under a
     * folder claimed by dropFolder (removed again when the upload fails, so a refused upload
     * creates nothing). `names` collects the names as sent, not as stored: a collision suffix
     * would tell the visitor what the folder holds.
     */
    async upload(live: LiveShare, segments: readonly string[], parts: AsyncIterable<UploadPart>): Promise<void> {
      const target = await this.dropFolder(live, segments);
      try {
        await deps.files.writeParts(target.key, parts, { overwrite: false, writer: null });
      } catch (e) {
        await target.abandon();
        throw e;
      }
    },

    /** The text preview of a file on a share page: its first TEXT_PREVIEW_BYTES as UTF-8. */
    async previewText(key: StorageKey, entry: Entry): Promise<{ content: string; truncated: boolean }> {
      const end = Math.min(entry.size, TEXT_PREVIEW_BYTES) - 1;
      const { stream } = await deps.files.read(key, { start: 0, end });
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c as Buffer);
      return { content: new TextDecoder('utf-8').decode(Buffer.concat(chunks)), truncated: entry.size > TEXT_PREVIEW_BYTES };
    },

    /** Keys a visitor addresses below a shared folder, never outside it. */
    childKey(live: LiveShare, segments: readonly string[]): StorageKey {
      return keyBelow(live.key, segments);
    },

    /**
     * The key of a file a visitor's path names, when it can be opened without
     * looking at the share's target first: a file share's own address, or a
     * path below a shared folder (a file found there proves the folder is
     * there, as in open()). Undefined otherwise: the link's root, or a path
     * below a file share.
     */
    fileKey(share: Share, segments: readonly string[]): StorageKey | undefined {
      return share.isFile === (segments.length === 0) ? keyBelow(keyOf(share), segments) : undefined;
    },

    displayName: (live: LiveShare): string => keyName(live.key) || 'Shared folder',

    sweep: () => store.shares.deleteExpired(clock.now()),

    async close(): Promise<void> {
      unsubscribe();
      if (flushTimer) clearTimeout(flushTimer);
      await flush();
    },
  };
}
