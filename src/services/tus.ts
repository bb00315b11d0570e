import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import { writerOf, type Principal } from '../domain/principal.js';
import { keyChild, parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import { tryHold, type Coordination } from '../storage/coordination.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { TusUpload } from '../store/tus-uploads.js';
import type { Door } from './door.js';
import { storageCall } from './storage-errors.js';
import type { UsageService } from './usage.js';
import { sentence } from '../lib/i18n/sentences.js';

export type TusService = ReturnType<typeof createTusService>;

/**
 * How long a PATCH's lease on its upload lives without renewal. Short, so
 * that after a crash (SIGKILL) the client's retry gets the upload back
 * within seconds; a live writer renews it every third of this.
 */
const LEASE_TTL_MS = 10_000;
const BUSY = Symbol('busy');

/** What a creation asks for, already parsed from the headers. */
export type CreateRequest = {
  /** undefined = deferred (creation-defer-length). */
  readonly length: number | undefined;
  /** The raw Upload-Metadata header, echoed on HEAD. */
  readonly rawMetadata: string;
  readonly metadata: ReadonlyMap<string, string>;
  readonly overwrite: boolean;
};

export type ChunkRequest = {
  readonly offset: number;
  /** Upload-Length sent with a PATCH to settle a deferred length. */
  readonly length?: number;
  readonly sha1?: Buffer;
  /** Content-Length of the chunk when the client declared it: too many bytes are refused before any is read. */
  readonly declaredBytes?: number;
};

/**
 * Resumable uploads (CONTRACT "Resumable uploads (tus 1.0)"), knowing no
 * HTTP: upload state in the metadata store, bytes in the backend's
 * resumable staging, one writer per upload at a time by a lease, and on
 * the last byte the file committed with the same rule as a multipart PUT.
 * An upload is only ever visible to its owner: for anyone else it does
 * not exist (404), so its id reveals nothing.
 */
export function createTusService(deps: {
  store: MetadataStore;
  backend: StorageBackend;
  clock: Clock;
  maxUploadBytes: number;
  expirySeconds: number;
  maxOpenUploads: number;
  usage: UsageService;
  /** The operation layer's check: an upload's folder (its own tree, or another's through a writable grant) is asked of `decide`. */
  operations: Pick<Door, 'may'>;
  /** --versions: a file an upload with overwrite replaces is kept as a version (services/versions.ts). */
  versions?: { readonly enabled: boolean; keep(key: StorageKey): Promise<void> };
}) {
  const { usage } = deps;
  const { store, backend, clock } = deps;
  const staging = backend.resumable;
  const coordination: Coordination = { leases: store.leases, journal: store.journal, now: () => clock.now() };
  const maxBytes = Number.isFinite(deps.maxUploadBytes) ? deps.maxUploadBytes : undefined;
  const expiry = () => clock.now() + deps.expirySeconds * 1000;
  const notFound = () => new AppError('not_found', 'No such upload (it may have expired or been finished long ago).');

  const checkSize = (length: number) => {
    if (maxBytes !== undefined && length > maxBytes) throw new AppError('too_large', `The upload is larger than this server accepts (${maxBytes} bytes).`);
  };

  /** The folder an upload goes to: Upload-Metadata `folder` (`/<user>/<path>`), default the owner's root. */
  async function folderOf(principal: Principal, raw: string | undefined): Promise<StorageKey> {
    const path = raw === undefined || raw === '' ? `${principal.username}/` : raw.replace(/^\//, '').replace(/\/$/, '');
    const { key } = parseDecodedStoragePath(path.includes('/') ? path : `${path}/`);
    // Another user's folder only through a writable grant (the same decide as an upload's URL; 401 outside, 403 read-only).
    await deps.operations.may(principal, key, 'PUT');
    return key;
  }

  const folderKey = (u: TusUpload): StorageKey => ({ user: u.user, segments: u.folder === '' ? [] : u.folder.split('/') });
  const finalPathOf = (key: StorageKey) => `/${key.user}/${key.segments.join('/')}`;

  /** The caller's own live upload, or 404; `method`: what the request does with it (HEAD reads, PATCH and DELETE write). */
  async function owned(principal: Principal | null, id: string, method: 'GET' | 'PUT'): Promise<TusUpload> {
    const u = await store.tusUploads.get(id);
    if (!u || !principal || principal.kind !== 'user' || (u.uploader ?? u.user) !== principal.username || u.expiresAt <= clock.now()) throw notFound();
    // Every request on an upload is asked of the layer for its folder: the owner's as what it does, one
    // sent through a grant as the write it is whatever the request (a revocation, a narrowing to read or
    // leaving the group ends it at once). A refusal answers as an upload that is not the caller's.
    await deps.operations.may(principal, folderKey(u), u.uploader === undefined ? method : 'PUT').catch(() => Promise.reject(notFound()));
    return u;
  }

  /** The last byte is in: the file appears in its folder (created if missing), replaced or under a collision name. */
  async function finish(u: TusUpload): Promise<TusUpload> {
    const length = u.length as number;
    const folder = folderKey(u);
    await storageCall(() => backend.mkdir(folder, { parents: true, existOk: true }), { already_exists: 'A file is in the way where the upload\'s folder is needed.' });
    const target = keyChild(folder, u.filename);
    const keep = u.overwrite && deps.versions?.enabled === true ? () => deps.versions!.keep(target) : undefined;
    const entry = await storageCall(() => staging.commit(u.id, length, target, { ifExists: u.overwrite ? 'replace' : 'rename', beforeReplace: keep }));
    // undefined: an earlier commit made the file and died before recording it; '' marks it finished, path unknown.
    const finalPath = entry ? finalPathOf(keyChild(folder, entry.name)) : '';
    // The file's bytes are in the usage figure before the upload stops holding them: never counted nowhere.
    await usage.flush();
    await store.tusUploads.finish(u.id, finalPath);
    return { ...u, finalPath };
  }

  /** Runs fn holding the upload's lease; BUSY (fn not run) while another request holds it. */
  async function ifFree<T>(id: string, fn: () => Promise<T>): Promise<T | typeof BUSY> {
    const lease = await tryHold(coordination, `tus:${id}`, LEASE_TTL_MS);
    if (!lease) return BUSY;
    try {
      return await fn();
    } finally {
      await lease.release();
    }
  }

  /** Holds the upload's lease for fn, or 409 when another request is writing it right now. */
  async function exclusively<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const r = await ifFree(id, fn);
    if (r === BUSY) throw new AppError('upload_busy', 'Another request is writing to this upload right now; retry after it ends.');
    return r;
  }

  return {
    maxUploadBytes: maxBytes,

    async create(principal: Principal, req: CreateRequest): Promise<TusUpload> {
      if (req.length !== undefined) checkSize(req.length);
      const filename = req.metadata.get('filename');
      if (filename === undefined) throw new AppError('bad_request', 'Upload-Metadata must name the file: filename <base64 name>.');
      const problem = nameProblem(filename);
      if (problem) throw new AppError('invalid_name', sentence('apiDetail.fileNameNotAllowed', { name: filename.slice(0, 100), problem }));
      const folder = await folderOf(principal, req.metadata.get('folder'));
      // Fail now rather than after the last byte when a file blocks the folder.
      const there = await storageCall(() => backend.stat(folder));
      if (there?.isFile) throw new AppError('not_a_directory', 'A file is in the way where the upload\'s folder is needed.');
      const now = clock.now();
      const u: TusUpload = {
        id: randomUUID(),
        user: folder.user,
        uploader: folder.user === principal.username ? undefined : principal.username,
        offset: 0,
        length: req.length,
        metadata: req.rawMetadata,
        folder: folder.segments.join('/'),
        filename,
        overwrite: req.overwrite,
        finalPath: undefined,
        createdAt: now,
        expiresAt: expiry(),
      };
      // The upload holds its length against the quota from now until it finishes, is terminated or
      // expires (in the store, so every node sees it); the cap bounds what one user can hold open.
      await storageCall(() => staging.create(u.id));
      const writer = writerOf(principal);
      const record = () =>
        store.tusUploads.create(u, { maxOpen: deps.maxOpenUploads }).catch(async (e: unknown) => {
          await staging.remove(u.id).catch(() => undefined);
          throw e;
        });
      let created = await record();
      // The owner's own upload may make room from their kept bytes, once (services/usage.ts).
      if (created === 'quota_exceeded' && u.length !== undefined && (await usage.makeRoom(u.user, writer, u.length))) created = await record();
      if (created !== 'created') {
        await storageCall(() => staging.remove(u.id));
        if (created === 'quota_exceeded') throw await usage.refusal(u.user, writer);
        throw new AppError('too_many_uploads', `You have ${deps.maxOpenUploads} unfinished uploads; finish or cancel one of them first (unfinished uploads expire after ${deps.expirySeconds} seconds).`);
      }
      // An empty file is complete at once.
      if (u.length === 0) return exclusively(u.id, () => finish(u));
      return u;
    },

    /** HEAD: the upload's state; one whose last byte is in but whose file was not yet committed (a crash) is committed now. */
    async get(principal: Principal | null, id: string): Promise<TusUpload> {
      const u = await owned(principal, id, 'GET');
      if (u.finalPath === undefined && u.length !== undefined && u.offset === u.length) {
        // A writer holding the upload is committing it right now (a large file on S3 takes a while):
        // tell the state as it is rather than 409, the client learns the path from that writer or a later HEAD.
        const r = await ifFree(id, async () => {
          const fresh = await owned(principal, id, 'GET');
          return fresh.finalPath === undefined ? finish(fresh) : fresh;
        });
        return r === BUSY ? u : r;
      }
      return u;
    },

    /**
     * PATCH: appends body at the client's offset. Returns the upload after
     * the chunk; the chunk ends early (the client went away) → what arrived
     * is kept (without a checksum) and recorded.
     */
    async append(principal: Principal | null, id: string, body: Readable, req: ChunkRequest): Promise<TusUpload> {
      await owned(principal, id, 'PUT');
      return exclusively(id, async () => {
        // Read again under the lease: another writer may have moved it on meanwhile.
        let u = await owned(principal, id, 'PUT');
        if (req.offset !== u.offset) throw new AppError('offset_mismatch', `Upload-Offset is ${req.offset}, but the upload is at ${u.offset}; ask with HEAD and resume from there.`);
        if (req.length !== undefined) {
          if (u.length === undefined) {
            checkSize(req.length);
            if (req.length < u.offset) throw new AppError('bad_request', 'Upload-Length is less than the bytes already received.');
            const set = await store.tusUploads.setLength(id, req.length, u.offset);
            if (set === 'quota_exceeded') throw await usage.refusal(u.user, u.uploader ?? u.user);
            if (set === 'gone') throw notFound();
            u = { ...u, length: req.length };
          } else if (req.length !== u.length) {
            throw new AppError('bad_request', 'Upload-Length cannot change once it is set.');
          }
        }
        if (u.finalPath !== undefined) return u;
        const room = u.length !== undefined ? u.length - u.offset : maxBytes !== undefined ? maxBytes - u.offset : Number.MAX_SAFE_INTEGER;
        if (req.declaredBytes !== undefined && req.declaredBytes > room) throw new AppError('too_large', `The chunk is larger than the ${room} bytes left of the upload.`);
        let at = u.offset;
        let expiresAt = u.expiresAt;
        // An upload of known length holds all of it already (see create), so its chunks need no
        // metering: the staging refuses bytes past the length. One of deferred length holds what it
        // has staged; this chunk's bytes are reserved as they arrive (so they are counted even
        // before they are durable) and handed over to the upload as each part is recorded.
        const quota = u.length === undefined ? await usage.quotaOf(u.user) : undefined;
        const reservation = quota === undefined ? undefined : await usage.reserve(u.user, u.uploader ?? u.user);
        let handed = 0;
        // Compare-and-set: under the lease nobody else moves it, so a failure means the upload is gone.
        const record = async (offset: number) => {
          const until = expiry();
          const give = reservation ? Math.min(offset - at, reservation.held) : 0;
          if (!(await store.tusUploads.advance(id, at, offset, until, { fromReserved: give }))) throw notFound();
          reservation?.handedOver(give);
          handed += give;
          at = offset;
          expiresAt = until;
        };
        try {
          const chunk = reservation && usage.meter(body, reservation, () => handed);
          const result = await storageCall(() => staging.append(id, u.offset, chunk ?? body, { maxBytes: room, sha1: req.sha1, onDurable: record }));
          if (chunk?.refusal) {
            // The bytes that fitted stay staged (never visible); the client learns the offset from HEAD.
            if (result.offset !== at) await record(result.offset);
            throw chunk.refusal;
          }
          if (result.outcome === 'checksum_mismatch') throw new AppError('checksum_mismatch', 'The chunk does not match its Upload-Checksum; it was discarded, send it again.');
          if (result.offset !== at) await record(result.offset);
          u = { ...u, offset: at, expiresAt };
          if (result.outcome === 'complete' && u.length !== undefined && u.offset === u.length) return await finish(u);
          return u;
        } finally {
          await reservation?.release();
        }
      });
    },

    /** DELETE (termination): the upload and its staged bytes are gone; 409 while a PATCH is writing it. */
    async terminate(principal: Principal | null, id: string): Promise<void> {
      await owned(principal, id, 'PUT');
      await exclusively(id, async () => {
        await storageCall(() => staging.remove(id));
        await store.tusUploads.delete(id);
      });
    },

    /** Removes expired uploads with their staging (run by the leader's storage sweep). */
    async sweep(): Promise<number> {
      let removed = 0;
      for (const u of await store.tusUploads.listExpired(clock.now(), 500)) {
        // A PATCH still writing it (it began before the expiry) finishes first; the next sweep takes it.
        const gone = await ifFree(u.id, async () => {
          await staging.remove(u.id);
          await store.tusUploads.delete(u.id);
        });
        if (gone !== BUSY) removed++;
      }
      // Staging without an upload record (a crash between the two): unreachable, so removed once it is old.
      const before = clock.now() - deps.expirySeconds * 1000;
      for (const s of await staging.list()) {
        if (s.modified >= before || (await store.tusUploads.get(s.id))) continue;
        await staging.remove(s.id);
        removed++;
      }
      return removed;
    },
  };
}
