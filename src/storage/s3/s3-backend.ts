import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { collisionName, compareCodePoints } from '../../domain/names.js';
import { isRoot, isSameOrInside, keyFolders, keyName, keyParent, type StorageKey } from '../../domain/storage-path.js';
import { contentTypeFor } from '../../lib/mime.js';
import { collectAndSort, holdsSource, openedBytes, stageAndCommit, StorageError, WHOLE_READ_MAX, type Opened, type ByteRange, type CommitOptions, type CopyOptions, type Entry, type StagedFile, type StorageBackend, type TrashArea, type Trashed, type VersionArea, type WalkEntry, type WalkOptions, type WriteOptions } from '../backend.js';
import { holdingBodyErrors } from '../body.js';
import { mapLimit } from '../../lib/map-limit.js';
import { storedSizes, type SizeView } from '../size-view.js';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { outsideRequest, requestSignal } from '../../lib/progress.js';
import { hold, holdInside, tryHold, tryHoldAll, whileHeld, type Coordination, type HeldLease } from '../coordination.js';
import { createEventHub, type StorageEvent } from '../events.js';
import { createS3Client, fromS3Error, isNotFound, s3Call, statusOf, type S3Credentials } from './client.js';
import { MOVE_JOURNAL, resumeFolderMoves, startFolderMove, type MoveJob } from './folder-move.js';
import { FILE_MOVE_JOURNAL, resumeFileMoves, startFileMove } from './file-move.js';
import { folderPrefix, objectKey, segmentsBelow, trashArea, validFoldersBelow, versionKey } from './keys.js';
import type { S3Location } from './location.js';
import type { IndexedKind, NameIndex } from '../name-index.js';
import { busyPaths, isBusy } from './busy-paths.js';
import { folderWins } from './folder-wins.js';
import { bodyBytes, copyObject, deleteKeys, MTIME, mtimeOf, mtimeValue, objectPages, putObject, type Stored } from './objects.js';
import { quietPages } from './quiet-pages.js';
import { createS3Resumable, type Produce } from './resumable.js';
import { clientTime, receive, receivedSize, UPLOAD_JOURNAL, type Received, type UploadRecord } from './upload.js';

const MAX_COLLISIONS = 10_000;
/** User metadata naming the write that created an object (takeBackLater). */
const WRITE_ID = 'fc-write';
/** How long, and how often, an unanswered create's name is watched; how many answers of "nothing there" end the watch. */
const TAKE_BACK_MS = 5 * 60_000;
const TAKE_BACK_STEP_MS = 1000;
const TAKE_BACK_ABSENT = 5;
const FOLDER_TYPE = 'application/x-directory';
/** Folders have no date of their own on S3 unless a marker gives one. */
const EPOCH = new Date(0);
/** How many parents parents() asks about at once: a few requests in flight, never a burst of a thousand. */
const PARENTS_AT_ONCE = 16;
/** Collision names whose kinds one question to the index asks for. */
const CANDIDATES_AT_ONCE = 16;

const notFound = () => new StorageError('not_found', 'No file or folder exists at this path.');
const isDir = () => new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
const taken = () => new StorageError('already_exists', 'Something already exists at this path.');
const fileInTheWay = () => new StorageError('not_a_directory', 'A file is in the way where a folder is needed.');
const pathOf = (key: StorageKey): string => key.segments.join('/');
/** The folders on the way to key below the user root, outermost first. */
const ancestorsOf = (key: StorageKey): StorageKey[] => key.segments.slice(0, -1).map((_, i) => ({ user: key.user, segments: key.segments.slice(0, i + 1) }));
const collisionKey = (key: StorageKey, n: number): StorageKey => ({ user: key.user, segments: [...key.segments.slice(0, -1), collisionName(keyName(key), n)] });

/** `modified`: the client's time (MTIME) where the object has one, else the store's; `clientTime`: that metadata as stored. */
type Head = { size: number; modified: Date; etag: string; clientTime?: string | undefined };
/** The metadata a copy of `h` keeps its client-set time with (undefined: the copy's own rule, objects.ts copyObject). */
const keptTime = (h: Head): Record<string, string> | undefined => (h.clientTime === undefined ? undefined : { [MTIME]: h.clientTime });
/**
 * How far apart the index's time of a file and the listing's may be and still be the store's own date:
 * the index takes a PutObject answer's Date, which can be a second off the object's LastModified
 * (docs/storage.md, "Dates of new files"). Further apart, with the same ETag, it is a client's time.
 */
const STORE_DATE_SLACK_MS = 1000;

/**
 * The S3 StorageBackend: every file is the plain object `PREFIX<user>/<path>`
 * with its real bytes and Content-Type (keys.ts has the layout), so any S3
 * tool sees the same tree. What S3 lacks is supplied by the metadata store
 * (coordination.ts): leases make name claims race-free across nodes, the
 * journal records multipart uploads and folder moves so a crash never leaves
 * a partial object or a half-moved tree unrecorded. docs/storage.md has the
 * whole design.
 *
 * The index in the metadata store (`names`) is the authority on names for
 * what File Cloud itself writes (CONTRACT "Backends and nodes"): a write asks
 * it, not the bucket, whether a file is in the way and what is at its name,
 * and a create is a conditional PutObject, so the store has the last word on
 * a file that another tool put there meanwhile.
 *
 * Conflicts only other tools (or a write the index missed) can create are
 * resolved so: a name that is both a file and a folder (`a` and `a/x`) is the
 * folder, the file hidden (folder-wins.ts); keys that are not valid File
 * Cloud paths (`a//b`, `..`) are skipped and never reachable.
 */
export function createS3Backend(loc: S3Location, coordination: Coordination, names: NameIndex, opts: { credentials?: S3Credentials; client?: S3Client; timeoutMs?: number; sizes?: SizeView } = {}): StorageBackend {
  const s3 = opts.client ?? createS3Client(loc, opts.credentials, { timeoutMs: opts.timeoutMs });
  const { bucket, prefix } = loc;
  const events = createEventHub();
  const sizes = opts.sizes ?? storedSizes;
  /**
   * Two leases per name. The name lease is a writer's claim on a free name,
   * held for a whole upload; a replace, move or copy onto the name waits for
   * it. The edit lease is short: it is held around every change to what is
   * already there (replace, delete, move, copy, from head to event), so the
   * size an event reports is the size of what the change really removed,
   * and usage stays exact. Name leases are always taken before edit leases,
   * and edit leases in sorted order (holdAll), so waiters never form a circle.
   *
   * A folder's edit lease also keeps changes out of everything below it, for
   * a change of the whole folder (a delete, a move, a copy over it, into the
   * trash), which counts the files below it by listing them: a change below
   * steps back while the folder's lease is held (holdEdits), and the folder's
   * change waits for the changes below that began before it (quietPages).
   * Changes side by side in one folder hold no lease of it and run together;
   * a folder copy holds only its destination's, so what it copies stays
   * writable (docs/storage.md, "Concurrency below a folder").
   */
  const nameLease = (objKey: string) => `s3-name:${bucket}/${objKey}`;
  const editLease = (objKey: string) => `s3-edit:${bucket}/${objKey}`;
  const editLeases = (...keys: StorageKey[]) => keys.map((k) => editLease(objectKey(prefix, k)));
  /** The edit leases of the folders around keys (and of the user's root), which a change of a whole folder holds. */
  const editsAround = (keys: StorageKey[]) => editLeases(...keys.flatMap((k) => [{ user: k.user, segments: [] }, ...keyFolders(k)]));
  /** The edit leases a journaled folder move held (its source's and destination's), held again when it is resumed. */
  const moveEdits = (job: MoveJob) => [editLease(job.from.slice(0, -1)), editLease(job.to)];
  /** The edit leases of keys, once no change of a folder around them (or of the user's root) is under way. */
  const holdEdits = (keys: StorageKey[], signal?: AbortSignal) => holdInside(coordination, editLeases(...keys), editsAround(keys), signal);
  /** The objects below a folder whose edit lease this change holds, page by page as they are once the changes below are done. */
  const settledPages = (key: StorageKey) => quietPages(s3, bucket, coordination, folderPrefix(prefix, key), editLease, editLeases(key));

  async function head(objKey: string): Promise<Head | undefined> {
    try {
      const r = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: objKey }));
      return { size: r.ContentLength ?? 0, modified: mtimeOf(r.Metadata) ?? r.LastModified ?? EPOCH, etag: r.ETag ?? '""', clientTime: r.Metadata?.[MTIME] };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
  const headFile = (key: StorageKey) => s3Call('Reading file information', () => head(objectKey(prefix, key)));

  /**
   * The size the backend's SizeView shows for the object of `size` stored bytes: one ranged GET of its
   * first bytes when the view needs them. Gone meanwhile: as stored (the caller holds the leases that
   * keep what it measures in place, so only another tool can make that happen).
   */
  async function shownOf(objKey: string, size: number): Promise<number> {
    if (!sizes.needsHead(size)) return size;
    const first = await s3Call('Reading file information', async () => {
      try {
        const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: objKey, Range: `bytes=0-${sizes.headBytes - 1}` }));
        return await bodyBytes(r.Body as Readable, r.ContentLength ?? sizes.headBytes);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    });
    return sizes.shown(size, first);
  }
  /** How many objects' first bytes a folder's count reads at once. */
  const SHOWN_READS = 16;
  /** The shown bytes of listed objects, summed. */
  const shownSum = async (objects: readonly { Key?: string; Size?: number }[]): Promise<number> =>
    (await mapLimit(objects, SHOWN_READS, (o) => shownOf(o.Key as string, o.Size ?? 0))).reduce((a, b) => a + b, 0);
  /** A file's entry as events show it: its size as the SizeView shows it (`data`: the bytes just stored, when at hand). */
  const shownEntry = async (key: StorageKey, entry: Entry, data?: Buffer): Promise<Entry> => {
    if (!sizes.needsHead(entry.size)) return entry;
    const size = data ? sizes.shown(entry.size, data.subarray(0, sizes.headBytes)) : await shownOf(objectKey(prefix, key), entry.size);
    return { ...entry, size };
  };

  /** The first key inside a folder (its marker or anything below), or undefined when the folder does not exist. */
  async function folderProbe(key: StorageKey): Promise<{ modified: Date } | undefined> {
    const p = folderPrefix(prefix, key);
    const r = await s3Call('Reading folder information', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: p, MaxKeys: 1 })));
    const first = r.Contents?.[0];
    if (!first) return undefined;
    return { modified: first.Key === p ? (first.LastModified ?? EPOCH) : EPOCH };
  }

  // Listings carry milliseconds, HEAD and GET whole seconds (HTTP dates): whole seconds everywhere, so both agree.
  const fileEntry = (name: string, h: Head): Entry => ({ name, isFile: true, size: h.size, modified: new Date(Math.floor(h.modified.getTime() / 1000) * 1000), etag: h.etag });
  const folderEntry = (name: string, modified: Date): Entry => ({ name, isFile: false, size: 0, modified, etag: `"d-${modified.getTime().toString(36)}"` });

  /** A folder at the name wins over a file there (folder-wins.ts); both are asked at once. */
  async function stat(key: StorageKey): Promise<Entry | undefined> {
    const [h, folder] = await Promise.all([isRoot(key) ? undefined : headFile(key), folderProbe(key)]);
    if (folder) return folderEntry(keyName(key), folder.modified);
    return h && fileEntry(keyName(key), h);
  }

  /**
   * Each parent is one HEAD and one one-key listing, whatever its depth (the
   * object store has no walk): linear in the depth, asked a few at a time.
   */
  async function parents(key: StorageKey): Promise<Entry[]> {
    const keys = key.segments.slice(0, -1).map((_, i) => ({ user: key.user, segments: key.segments.slice(0, i + 1) }));
    const found: Entry[] = [];
    for (let i = 0; i < keys.length; i += PARENTS_AT_ONCE) {
      const entries = await Promise.all(keys.slice(i, i + PARENTS_AT_ONCE).map((k) => stat(k)));
      for (const e of entries) {
        if (!e || e.isFile) return found;
        found.push(e);
      }
    }
    return found;
  }

  /**
   * A write's look at its parents and its name, in the index, not the bucket (CONTRACT "Backends and
   * nodes"): a file in the way of a parent is `not_a_directory`; `at` is what is at the name; `made`
   * are the parents the index lacks, which the write makes — on S3 a folder exists once a key is below
   * it, implied, dated 1970 as stat shows it — for the event, so no listener asks the bucket for them.
   */
  async function look(key: StorageKey): Promise<{ at: IndexedKind | undefined; made: Entry[] }> {
    const ups = ancestorsOf(key);
    const kinds = await names.kinds(key.user, [...ups.map(pathOf), ...(isRoot(key) ? [] : [pathOf(key)])]);
    if (ups.some((k) => kinds.get(pathOf(k)) === 'file')) throw fileInTheWay();
    const first = ups.findIndex((k) => !kinds.has(pathOf(k)));
    return { at: isRoot(key) ? 'folder' : kinds.get(pathOf(key)), made: first < 0 ? [] : ups.slice(first).map((k) => folderEntry(keyName(k), EPOCH)) };
  }

  /** A zero-byte marker keeps a folder when its last key goes (user roots and emptied folders). */
  /**
   * A conditional create the store never answered (it hung, or the connection broke) may still be
   * taken once the store recovers, after its client was told the write failed. So the name is looked
   * at until the store has answered several times that nothing is there, or for TAKE_BACK_MS at
   * most, and an object this write stored (its WRITE_ID) is removed; anything else there is left.
   */
  function takeBackLater(key: string, id: string): void {
    outsideRequest(() => {
      void (async () => {
        const until = Date.now() + TAKE_BACK_MS;
        let absent = 0;
        while (Date.now() < until && absent < TAKE_BACK_ABSENT) {
          await sleep(TAKE_BACK_STEP_MS);
          try {
            const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
            if (h.Metadata?.[WRITE_ID] === id) await deleteKeys(s3, bucket, [key]);
            return;
          } catch (e) {
            if (isNotFound(e)) absent++;
          }
        }
      })().catch(() => undefined);
    });
  }

  /**
   * The client-set times of listed files (ListObjectsV2 returns no metadata, so not the MTIME the
   * objects carry): the index's time of a file whose row has the listing's ETag and lies further
   * from the store's date than a PutObject answer can (STORE_DATE_SLACK_MS), as a write with a time
   * or a redate left it there. One question to the index per page.
   */
  async function clientTimes(user: string, files: readonly { path: string; entry: Entry }[]): Promise<Map<string, Date>> {
    const out = new Map<string, Date>();
    if (files.length === 0) return out;
    const rows = await names.times(user, files.map((f) => f.path));
    for (const { path, entry } of files) {
      const row = rows.get(path);
      if (row?.etag === entry.etag && Math.abs(row.modified - entry.modified.getTime()) > STORE_DATE_SLACK_MS) out.set(path, new Date(row.modified));
    }
    return out;
  }

  const putMarker = (key: StorageKey) => putObject(s3, { Bucket: bucket, Key: folderPrefix(prefix, key), Body: '', ContentLength: 0, ContentType: FOLDER_TYPE }, 'Creating a folder');
  const keepParent = (key: StorageKey) => putMarker(keyParent(key));

  async function* listPages(dir: StorageKey): AsyncGenerator<Entry[]> {
    const p = folderPrefix(prefix, dir);
    let token: string | undefined;
    let first = true;
    // A file and a folder prefix of one name: the folder (folder-wins.ts); the listing's files and prefixes in key order.
    const wins = folderWins<Entry>(() => undefined);
    do {
      const r = await s3Call('Listing the folder', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: p, Delimiter: '/', ContinuationToken: token })));
      if (first && !r.Contents?.length && !r.CommonPrefixes?.length) {
        if (!isRoot(dir) && (await headFile(dir))) throw new StorageError('not_a_directory', 'A file is at this path, where a folder is needed.');
        throw new StorageError('not_found', 'No folder exists at this path.');
      }
      first = false;
      const keys = [...(r.Contents ?? []).map((o) => ({ key: o.Key ?? '', o })), ...(r.CommonPrefixes ?? []).map((cp) => ({ key: cp.Prefix ?? '', o: undefined }))];
      keys.sort((a, b) => compareCodePoints(a.key, b.key));
      const page: Entry[] = [];
      for (const { key, o } of keys) {
        const below = segmentsBelow(p, key);
        const name = below?.segments.length === 1 ? (below.segments[0] as string) : undefined;
        if (name === undefined || below?.folder) {
          page.push(...wins.next(key));
          if (name !== undefined && o === undefined) page.push(folderEntry(name, EPOCH));
          continue;
        }
        page.push(...wins.next(key, fileEntry(name, { size: o?.Size ?? 0, modified: o?.LastModified ?? EPOCH, etag: o?.ETag ?? '""' })));
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
      if (!token) page.push(...wins.end());
      const pathIn = (name: string) => [...dir.segments, name].join('/');
      const times = await clientTimes(dir.user, page.filter((e) => e.isFile).map((entry) => ({ path: pathIn(entry.name), entry })));
      yield times.size === 0 ? page : page.map((e) => {
        const t = e.isFile ? times.get(pathIn(e.name)) : undefined;
        return t ? { ...e, modified: t } : e;
      });
    } while (token);
  }

  async function* walk(dir: StorageKey, opts: WalkOptions = {}): AsyncGenerator<WalkEntry> {
    const p = folderPrefix(prefix, dir);
    const folders = new Set<string>();
    // A file and a folder of one name: the folder (folder-wins.ts); the file is named to onHidden.
    const wins = folderWins<WalkEntry>((w) => opts.onHidden?.(w.path));
    // onBusy: the paths a change holds are left out, asked before the first page and after each (busy-paths.ts says why).
    const dirLease = editLease(objectKey(prefix, dir));
    let busy: Set<string> | 'all' = new Set();
    const lookBusy = async () => {
      if (!opts.onBusy || busy === 'all') return;
      const found = busyPaths(await coordination.leases.heldWithin(dirLease, (coordination.now ?? Date.now)()), dirLease, editLease(p));
      if (found === 'all') {
        busy = 'all';
        opts.onBusy([]);
        return;
      }
      for (const path of found) {
        if (busy.has(path)) continue;
        busy.add(path);
        opts.onBusy(path.split('/'));
      }
    };
    const calm = (found: WalkEntry[]) => (opts.onBusy ? found.filter((w) => !isBusy(w.path, busy)) : found);
    /** A page's entries, files with their client-set times (clientTimes), so a rescan keeps those in the index. */
    async function* dated(found: WalkEntry[]): AsyncGenerator<WalkEntry> {
      const pathIn = (w: WalkEntry) => [...dir.segments, ...w.path].join('/');
      const times = await clientTimes(dir.user, found.filter((w) => w.entry.isFile).map((w) => ({ path: pathIn(w), entry: w.entry })));
      for (const w of found) {
        const t = w.entry.isFile ? times.get(pathIn(w)) : undefined;
        yield t ? { path: w.path, entry: { ...w.entry, modified: t } } : w;
      }
    }
    await lookBusy();
    for await (const page of objectPages(s3, bucket, p)) {
      const found: WalkEntry[] = [];
      for (const o of page) {
        const key = o.Key ?? '';
        const below = segmentsBelow(p, key) ?? { segments: validFoldersBelow(p, key), folder: true };
        const { segments } = below;
        found.push(...wins.next(key, below.folder || segments.length === 0 ? undefined : { path: segments, entry: fileEntry(segments[segments.length - 1] as string, { size: o.Size ?? 0, modified: o.LastModified ?? EPOCH, etag: o.ETag ?? '""' }) }));
        const upto = below.folder ? segments.length : segments.length - 1;
        for (let i = 1; i <= upto; i++) {
          const path = segments.slice(0, i);
          const id = path.join('/');
          if (folders.has(id)) continue;
          folders.add(id);
          found.push({ path, entry: folderEntry(path[i - 1] as string, i === upto && below.folder ? (o.LastModified ?? EPOCH) : EPOCH) });
        }
      }
      await lookBusy();
      yield* dated(calm(found));
    }
    yield* dated(calm(wins.end()));
  }

  /** A GetObject answer as an open file named `name`; a small one read whole, sent as one buffer as on local disk (WHOLE_READ_MAX). */
  async function openedAnswer(name: string, r: GetObjectCommandOutput): Promise<Opened> {
    // With a range, the whole size is in Content-Range ("bytes 0-9/1234").
    const total = r.ContentRange ? Number(r.ContentRange.split('/')[1]) : (r.ContentLength ?? 0);
    const entry = fileEntry(name, { size: total, modified: mtimeOf(r.Metadata) ?? r.LastModified ?? EPOCH, etag: r.ETag ?? '""' });
    if (r.ContentLength !== undefined && r.ContentLength <= WHOLE_READ_MAX) return openedBytes(entry, await bodyBytes(r.Body as Readable, r.ContentLength));
    return { stream: r.Body as Readable, entry };
  }

  async function read(key: StorageKey, range?: ByteRange): Promise<Opened> {
    if (isRoot(key)) throw isDir();
    try {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(prefix, key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return await openedAnswer(keyName(key), r);
    } catch (e) {
      // The file shrank below the range since it was checked: the whole current file (its new ETag tells the caller).
      if (range && statusOf(e) === 416) return read(key);
      if (isNotFound(e)) throw (await folderProbe(key)) ? isDir() : new StorageError('not_found', 'No file exists at this path.');
      throw fromS3Error(e, 'Reading the file');
    }
  }

  /** Is a folder (any key below) at this key? */
  const folderAt = async (key: StorageKey) => (await folderProbe(key)) !== undefined;

  type Claim = { readonly key: StorageKey; readonly n: number; readonly lease: HeldLease };

  /**
   * Claims a free name for `fail`/`rename` writers, from collision number
   * `from` on: a name the index holds nothing at, and a lease on it (so no
   * other File Cloud writer takes it, on any node), held until the file is
   * committed. A file there that the index does not know (another tool's) is
   * left to the store: the PutObject's If-None-Match, or the look before a
   * multipart upload (keyAt). `known`: what the writer's look found at the
   * name itself.
   */
  async function claim(key: StorageKey, mode: 'fail' | 'rename', from: number, known?: { at: IndexedKind | undefined }): Promise<Claim> {
    const attempts = mode === 'fail' ? 1 : MAX_COLLISIONS;
    let kinds = new Map<number, IndexedKind | undefined>(known ? [[from, known.at]] : []);
    for (let n = from; n < attempts; n++) {
      if (!kinds.has(n)) {
        const ns = Array.from({ length: Math.min(CANDIDATES_AT_ONCE, attempts - n) }, (_, i) => n + i);
        const found = await names.kinds(key.user, ns.map((i) => pathOf(collisionKey(key, i))));
        kinds = new Map(ns.map((i) => [i, found.get(pathOf(collisionKey(key, i)))]));
      }
      const there = kinds.get(n);
      if (there) {
        if (mode === 'fail') throw there === 'folder' ? isDir() : taken();
        continue;
      }
      const candidate = collisionKey(key, n);
      const lease = await tryHold(coordination, nameLease(objectKey(prefix, candidate)));
      if (lease) return { key: candidate, n, lease };
      if (mode === 'fail') throw taken();
    }
    throw new StorageError('already_exists', `No free name for "${keyName(key)}" after ${MAX_COLLISIONS} attempts.`);
  }

  const stage = (key: StorageKey, body: Readable, opts: WriteOptions): Promise<StagedFile> =>
    holdingBodyErrors(body, () => stageFrom(key, opts, (keyAt, contentType) => receive(s3, coordination, bucket, keyAt, contentType, body, opts)));

  /**
   * The claim, commit and discard of a write, around `produce`, which
   * brings the bytes to the claimed object key (receiving a body, or
   * copying a resumable upload's segments inside the store). It asks for the
   * key (`keyAt`) before it stores a byte under it: a multipart upload as it
   * starts, a copy at once; a single body needs none (one PutObject at commit).
   */
  async function stageFrom(key: StorageKey, opts: WriteOptions, produce: Produce): Promise<StagedFile> {
    if (isRoot(key)) throw isDir();
    // The index answers for the parents and the name (look); what the caller has just seen there is not asked again.
    const looked = opts.freeNameInFolder !== true;
    const { at, made } = looked ? await look(key) : { at: undefined, made: [] };
    if (at === 'folder' && opts.ifExists === 'replace') throw isDir();
    let claimed = opts.ifExists === 'replace' ? undefined : await claim(key, opts.ifExists, 0, { at });
    /** Marks the object this write creates, so a create that went unanswered can be told apart and taken back. */
    const writeId = randomUUID();
    let fileLooked = false;
    let target = claimed?.key ?? key;
    /** A file is at the claimed name (found by a look or a 412): `fail` ends here; `rename` claims a later name. */
    const claimNext = async (held: Claim): Promise<void> => {
      if (opts.ifExists === 'fail') throw taken();
      const next = await claim(key, 'rename', held.n + 1);
      await held.lease.release();
      claimed = next;
      target = next.key;
    };
    // A multipart upload's completion is not conditional (radosgw ignores If-None-Match there): the
    // bucket is asked before a byte is stored under a claimed name, until a name is free of files.
    const keyAt = async (): Promise<string> => {
      for (let held = claimed; held && !fileLooked; held = claimed) {
        if (await headFile(target)) await claimNext(held);
        else fileLooked = true;
      }
      return objectKey(prefix, target);
    };
    let received: Received;
    try {
      received = await produce(keyAt, contentTypeFor(keyName(target)));
    } catch (e) {
      await claimed?.lease.release();
      throw e;
    }
    let settled = false;
    const discard = async () => {
      if (settled) return;
      settled = true;
      try {
        if (received.kind === 'multipart') await received.abort();
      } finally {
        await claimed?.lease.release();
      }
    };

    /** The event of a new file at the target, with the folders the write made on its way (look). */
    const created = (entry: Entry): StorageEvent => ({ type: 'created', key: target, isFile: true, size: entry.size, entry, ...(made.length > 0 ? { madeFolders: made } : {}), ...(looked || opts.aboveIndexed === true ? { parentsLooked: true } : {}) });

    /** One PutObject of data at the target; `onlyIfFree`: If-None-Match: * (412 when a file is there). */
    const putAtTarget = async (data: Buffer, onlyIfFree: boolean): Promise<Stored> => {
      const Key = objectKey(prefix, target);
      try {
        return await putObject(s3, { Bucket: bucket, Key, Body: data, ContentLength: data.length, ContentType: contentTypeFor(keyName(target)), IfNoneMatch: onlyIfFree ? '*' : undefined, Metadata: onlyIfFree ? { [WRITE_ID]: writeId, ...clientTime(opts) } : clientTime(opts) });
      } catch (e) {
        // No answer: the store may still take this create once it recovers, after the client was told it failed.
        if (onlyIfFree && e instanceof StorageError && (e.code === 'unavailable' || e.code === 'failed')) takeBackLater(Key, writeId);
        throw e;
      }
    };

    /**
     * One PutObject. A claimed name also sends If-None-Match: *, so a file
     * another tool stored there is never replaced; `rename` then claims a
     * later name and stores there instead.
     */
    async function putSingle(data: Buffer): Promise<Stored> {
      for (;;) {
        try {
          return await putAtTarget(data, claimed !== undefined);
        } catch (e) {
          if (statusOf(e) !== 412 || !claimed) throw e;
          await claimNext(claimed);
        }
      }
    }

    /**
     * The entry of what a PutObject stored: its ETag, and the date of the store's answer, with no HEAD
     * after it (docs/storage.md, "Dates of new files"). A store whose answers carry no Date is asked.
     */
    async function storedEntry(stored: Stored, size: number): Promise<Entry> {
      if (opts.modified) return fileEntry(keyName(target), { size, modified: opts.modified, etag: stored.etag });
      if (stored.date) return fileEntry(keyName(target), { size, modified: stored.date, etag: stored.etag });
      const h = await headFile(target);
      return fileEntry(keyName(target), { size, modified: h?.etag === stored.etag ? h.modified : new Date(), etag: stored.etag });
    }

    /**
     * A create the store took after its request was answered (the deadline passed while the store
     * hung, or the client went away): the client was not told it succeeded, so it is taken back.
     * The object is this write's own: stored with If-None-Match: * under the name's lease, still held.
     */
    async function takeBackIfAnswered(): Promise<void> {
      const signal = requestSignal();
      if (!signal?.aborted) return;
      await deleteKeys(s3, bucket, [objectKey(prefix, target)]);
      signal.throwIfAborted();
    }

    /**
     * A replace onto a name the index holds nothing at, as a create: one PutObject with If-None-Match: *
     * under the name and edit leases, taken and let go in one turn each, without the look at what was there
     * (docs/performance.md, "Seventh change", "Seventeenth change"). Nothing is taken away, so there is no
     * replaced size to get right; another writer that stores second gets 412, as link(2) decides on
     * local disk. The name lease still keeps out a writer that claimed the name: its
     * CompleteMultipartUpload is not conditional (radosgw ignores If-None-Match there) and would
     * replace this file unseen. Undefined when the name is leased or a file is there: the
     * caller replaces under the leases, as before.
     */
    async function createIfFree(data: Buffer): Promise<Entry | undefined> {
      // The name lease and its own edit lease in one turn, unless a folder around it is being changed (then the replace below
      // waits for that change): a folder's move or delete waits for it before listing (quietPages), so this file lands before
      // the folder is listed, or after the change, never between a move's copy and delete.
      const objKey = objectKey(prefix, target);
      const lease = await tryHoldAll(coordination, [nameLease(objKey), editLease(objKey)], editsAround([target]));
      if (!lease) return undefined;
      try {
        requestSignal()?.throwIfAborted();
        let stored: Stored;
        try {
          stored = await putAtTarget(data, true);
        } catch (e) {
          if (statusOf(e) === 412) return undefined;
          throw e;
        }
        await takeBackIfAnswered();
        settled = true;
        // Only a delete (or another tool) can have changed the object since: the event still reports what
        // this PUT created, and the delete's event what it removed.
        const entry = await storedEntry(stored, data.length);
        await events.emit(created(await shownEntry(target, entry, data)));
        return entry;
      } finally {
        await lease.release();
      }
    }

    return {
      size: receivedSize(received),
      discard,
      async commit(commitOpts) {
        if (settled) throw new StorageError('aborted', 'This upload was already committed or discarded.');
        // With a beforeReplace (quota, versions, If-Match) it must see what is there under the leases, as before.
        if (!claimed && at === undefined && received.kind === 'single' && commitOpts?.beforeReplace === undefined) {
          const created = await createIfFree(received.body);
          if (created) return created;
        }
        // A replace waits for a writer that claimed the name, so it never lands under a file that writer was promised.
        // A claimed name had nothing there and only this writer may create it, but it holds the edit lease too: a change of a
        // folder around it waits for it before listing (quietPages) or it waits for that change, so the file never lands
        // between a folder move's copy and its delete (deleted uncopied), and a multipart upload's file, which appears at its
        // completion and is asked for its ETag after, is not taken away and counted by a delete between the two.
        const held = claimed ? await holdEdits([target], opts.signal) : await holdForChange(target, [target], opts.signal);
        try {
          const before = opts.ifExists === 'replace' ? await headFile(target) : undefined;
          const previousSize = before && (await shownOf(objectKey(prefix, target), before.size));
          if (opts.ifExists === 'replace') await commitOpts?.beforeReplace?.(previousSize ?? 0);
          // The request was already answered 503 by its deadline (a service hung): the client was told
          // it failed, so it must not land now (src/app/request-deadline.ts).
          requestSignal()?.throwIfAborted();
          let entry: Entry;
          let data: Buffer | undefined;
          if (received.kind === 'single') {
            const stored = await putSingle(received.body);
            if (claimed) await takeBackIfAnswered();
            settled = true;
            data = received.body;
            entry = await storedEntry(stored, received.body.length);
          } else {
            await received.complete();
            settled = true;
            // radosgw leaves the ETag out of CompleteMultipartUpload's answer: ask.
            const h = await headFile(target);
            if (!h) throw new StorageError('failed', 'The object store lost the file it just stored.');
            entry = fileEntry(keyName(target), h);
          }
          // Emitted while this writer still holds the name (released below): the entry is what is there.
          const shown = await shownEntry(target, entry, data);
          await events.emit(previousSize !== undefined ? { type: 'replaced', key: target, size: shown.size, previousSize, entry: shown } : created(shown));
          return entry;
        } finally {
          if (!settled) await discard().catch(() => undefined);
          await claimed?.lease.release();
          await held?.release();
        }
      },
    };
  }

  /** stageFrom, then commit (or discard on failure): a write whose bytes `produce` brings. */
  async function commitFrom(key: StorageKey, opts: WriteOptions, produce: Produce, commitOpts?: CommitOptions): Promise<Entry> {
    const staged = await stageFrom(key, opts, produce);
    try {
      return await staged.commit(commitOpts);
    } catch (e) {
      await staged.discard().catch(() => undefined);
      throw e;
    }
  }

  async function mkdir(key: StorageKey, opts: { parents: boolean; existOk: boolean }): Promise<void> {
    if (isRoot(key)) {
      // A user's root is no entry of the index: the bucket says whether its marker (or anything in it) is there.
      if (!(await folderAt(key))) await putMarker(key);
      else if (!opts.existOk) throw taken();
      return;
    }
    // The index answers, as for a file's write (look).
    const { at, made } = await look(key);
    if (at === 'file') throw taken();
    // A parent the index lacks may be another tool's folder, not rescanned yet: the bucket has the last word on a refusal.
    if (!opts.parents && made.length > 0 && !(await folderAt(keyParent(key)))) throw new StorageError('not_found', 'The parent folder does not exist.');
    if (at === 'folder') {
      if (opts.existOk) return;
      throw taken();
    }
    // Under its edit lease, as a file's create: never between a move's copy and its delete of the folder around it.
    await whileHeld(holdEdits([key]), async () => {
      const stored = await putMarker(key);
      await events.emit({ type: 'created', key, isFile: false, size: 0, ...(stored.date ? { entry: folderEntry(keyName(key), stored.date) } : {}), ...(made.length > 0 ? { madeFolders: made } : {}), parentsLooked: true });
    });
  }

  async function remove(key: StorageKey, opts: { recursive: boolean }): Promise<void> {
    await whileHeld(holdEdits([key]), () => removeHeld(key, opts));
  }

  /** The file at key, unless a folder is there too (it wins: folder-wins.ts); both asked at once. */
  async function fileUnlessFolder(key: StorageKey): Promise<Head | undefined> {
    if (isRoot(key)) return undefined;
    const [h, folder] = await Promise.all([headFile(key), folderAt(key)]);
    return folder ? undefined : h;
  }

  /** remove, for a caller that holds the key's edit lease. */
  async function removeHeld(key: StorageKey, opts: { recursive: boolean }): Promise<void> {
    const h = await fileUnlessFolder(key);
    if (h) {
      if (!isRoot(keyParent(key))) await keepParent(key);
      const size = await shownOf(objectKey(prefix, key), h.size);
      await s3Call('Deleting the file', () => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(prefix, key) })));
      await events.emit({ type: 'deleted', key, isFile: true, size });
      return;
    }
    const p = folderPrefix(prefix, key);
    let found = false;
    let size = 0;
    for await (const page of settledPages(key)) {
      if (page.length === 0) continue;
      if (!found) {
        found = true;
        if (!opts.recursive && page.some((o) => o.Key !== p)) throw taken();
        if (!isRoot(key) && !isRoot(keyParent(key))) await keepParent(key);
      }
      size += await shownSum(page);
      await deleteKeys(s3, bucket, page.map((o) => o.Key as string));
    }
    if (!found) throw notFound();
    await events.emit({ type: 'deleted', key, isFile: false, size });
  }

  /** The bytes at key (every object below a folder, which wins, or a file), for events; undefined when nothing is there. Under key's edit lease. */
  async function sizeAt(key: StorageKey): Promise<number | undefined> {
    let size: number | undefined;
    for await (const page of settledPages(key)) if (page.length > 0) size = (size ?? 0) + (await shownSum(page));
    if (size !== undefined) return size;
    const h = await headFile(key);
    return h && shownOf(objectKey(prefix, key), h.size);
  }

  /** Waits for the changes below a folder whose lease this change holds (settledPages), listing it to its end. */
  async function settle(key: StorageKey): Promise<void> {
    const pages = settledPages(key);
    for (let r = await pages.next(); r.done !== true; r = await pages.next()) continue;
  }

  /** The leases of a change onto `dest`: its name lease (waits for a writer that claimed it), then the edit leases of `edited`. */
  async function holdForChange(dest: StorageKey, edited: StorageKey[], signal?: AbortSignal): Promise<HeldLease> {
    const name = await hold(coordination, nameLease(objectKey(prefix, dest)), signal);
    const edits = await holdEdits(edited, signal).catch(async (e: unknown) => {
      await name.release();
      throw e;
    });
    return {
      async release() {
        await edits.release();
        await name.release();
      },
    };
  }

  /** Checks shared by move and copy; returns the source's kind and the size of what the destination holds. */
  async function prepareTransfer(from: StorageKey, to: StorageKey, overwrite: boolean): Promise<{ source: Head | 'folder'; replaced: number | undefined }> {
    if (isSameOrInside(to, from)) throw new StorageError('into_itself', 'A folder cannot be moved into itself.');
    if (isRoot(to)) throw taken();
    const [file, folder] = await Promise.all([isRoot(from) ? undefined : headFile(from), folderAt(from)]);
    if (!file && !folder) throw notFound();
    await look(to);
    // Replacing the destination would take the source with it, and count it among the bytes replaced (as on local disk).
    // Asked before the destination is measured: that waits for the leases below it (settledPages), the source's among them.
    if (isSameOrInside(from, to)) throw overwrite ? holdsSource() : taken();
    const replaced = await sizeAt(to);
    if (replaced !== undefined && !overwrite) throw taken();
    return { source: folder ? 'folder' : (file as Head), replaced };
  }

  async function move(from: StorageKey, to: StorageKey, opts: { overwrite: boolean }): Promise<void> {
    // Never beside a change of a folder around either name (holdEdits): a move copies, then deletes the source, and a
    // delete of such a folder listing in between counted the file under both names (a folder move copied both, or the source was gone).
    const lease = await holdForChange(to, [from, to]);
    try {
      const { source, replaced } = await prepareTransfer(from, to, opts.overwrite);
      const dst = objectKey(prefix, to);
      if (source === 'folder') {
        // The changes below the source that began before this move are done before it copies a key.
        await settle(from);
        await startFolderMove(s3, coordination, {
          bucket,
          from: folderPrefix(prefix, from),
          to: dst,
          parentMarker: isRoot(keyParent(from)) ? null : folderPrefix(prefix, keyParent(from)),
          phase: replaced !== undefined ? 'clear' : 'copy',
        });
      } else {
        // File over a folder: the folder's keys go after the copy (the file wins meanwhile).
        await copyObject(s3, bucket, objectKey(prefix, from), dst, source.size, undefined, keptTime(source));
        if (replaced !== undefined) for await (const page of objectPages(s3, bucket, `${dst}/`)) await deleteKeys(s3, bucket, page.map((o) => o.Key as string));
        if (!isRoot(keyParent(from))) await keepParent(from);
        await deleteKeys(s3, bucket, [objectKey(prefix, from)]);
      }
      await events.emit({ type: 'moved', from, to, isFile: source !== 'folder', replacedSize: replaced ?? 0 });
    } finally {
      await lease.release();
    }
  }

  /**
   * Copies one object at the version seen (its size and ETag): the copy is
   * conditional on that ETag, and an object written meanwhile (412) is
   * measured again and metered again before it is copied, so what is metered
   * is what is copied. Returns the bytes copied, undefined for an object gone meanwhile.
   */
  async function copySeen(from: string, to: string, seen: Head | undefined, copied: number, beforeFile: CopyOptions['beforeFile']): Promise<number | undefined> {
    for (let version = seen; version; version = await s3Call('Reading file information', () => head(from))) {
      const shown = await shownOf(from, version.size);
      await beforeFile?.(copied + shown);
      try {
        await copyObject(s3, bucket, from, to, version.size, version.etag, keptTime(version));
        return shown;
      } catch (e) {
        if (statusOf(e) !== 412 && !isNotFound(e)) throw e;
      }
    }
    return undefined;
  }

  /**
   * A client's time on a stored file: the object copied onto itself with the time in its metadata
   * (MTIME), conditional on the ETag looked at, under the name's leases like any replace, so the copy
   * never undoes a write (another tool's, the only kind that can come in between, makes it look
   * again). Reported as the file replaced by its own bytes, which puts the time into the index,
   * where listings take it from (clientTimes).
   */
  async function redate(key: StorageKey, modified: Date): Promise<Entry> {
    if (isRoot(key)) throw isDir();
    const objKey = objectKey(prefix, key);
    const lease = await holdForChange(key, [key]);
    try {
      for (let tries = 1; ; tries++) {
        const h = await fileUnlessFolder(key);
        if (!h) throw (await folderAt(key)) ? isDir() : new StorageError('not_found', 'No file exists at this path.');
        try {
          await copyObject(s3, bucket, objKey, objKey, h.size, h.etag, { [MTIME]: mtimeValue(modified) });
        } catch (e) {
          if ((statusOf(e) === 412 || isNotFound(e)) && tries < 3) continue;
          throw e;
        }
        // A copy's ETag is the store's to choose (a multipart object's changes): asked, as after a multipart upload.
        const after = await headFile(key);
        if (!after) throw new StorageError('failed', 'The object store lost the file it just dated.');
        const entry = fileEntry(keyName(key), after);
        const shown = await shownEntry(key, entry);
        await events.emit({ type: 'replaced', key, size: shown.size, previousSize: shown.size, entry: shown, copyOf: { from: key, to: key } });
        return entry;
      }
    } finally {
      await lease.release();
    }
  }

  async function copy(from: StorageKey, to: StorageKey, opts: CopyOptions): Promise<void> {
    // The destination's leases only: a copy takes nothing away from its source, and holding a source folder's lease would
    // keep every write below it waiting for the whole copy (and one made from the copy's own beforeFile, forever).
    // What it copies is what it metered (copySeen), whatever is written to the source meanwhile.
    const lease = await holdForChange(to, [to]);
    try {
      const { source, replaced } = await prepareTransfer(from, to, opts.overwrite);
      const dst = objectKey(prefix, to);
      // A folder there (or any copy of a folder) clears the destination first; its delete reports what it took away.
      const cleared = replaced !== undefined && !(source !== 'folder' && (await fileUnlessFolder(to)));
      if (cleared) await removeHeld(to, { recursive: true });
      if (source !== 'folder') {
        const size = await copySeen(objectKey(prefix, from), dst, source, 0, opts.beforeFile);
        // The source went meanwhile: nothing was copied, and the destination is as it was (or cleared, and reported so).
        if (size === undefined) throw notFound();
        await events.emit(replaced !== undefined && !cleared ? { type: 'replaced', key: to, size, previousSize: replaced } : { type: 'created', key: to, isFile: true, size });
        return;
      }
      const src = folderPrefix(prefix, from);
      await putMarker(to);
      // The files below the source folder take no lease of it: each is copied (and counted) at the version the copy metered.
      let size = 0;
      try {
        for await (const page of objectPages(s3, bucket, src)) {
          for (const o of page) {
            const rest = (o.Key as string).slice(src.length);
            if (rest === '') continue;
            size += (await copySeen(o.Key as string, `${dst}/${rest}`, { size: o.Size ?? 0, modified: EPOCH, etag: o.ETag ?? '""' }, size, opts.beforeFile)) ?? 0;
          }
        }
      } finally {
        // A copy stopped midway (the quota, a failure) still reports what it did copy, so usage counts the bytes stored.
        await events.emit({ type: 'created', key: to, isFile: false, size });
      }
    } finally {
      await lease.release();
    }
  }

  /**
   * Aborts multipart uploads whose writer died: the journal names every
   * upload File Cloud started; one that made no progress for staleMs is
   * aborted. A record without an upload id (the process died right after
   * writing its intent) is matched against ListMultipartUploads by key and time.
   */
  async function sweepUploads(staleMs: number): Promise<void> {
    const now = (coordination.now ?? Date.now)();
    for (const record of await coordination.journal.list(UPLOAD_JOURNAL, now - staleMs, 500)) {
      const u = JSON.parse(record.data) as UploadRecord;
      if (u.bucket !== bucket) continue;
      const ids: string[] = [];
      if (u.uploadId) ids.push(u.uploadId);
      else {
        const r = await s3Call('Listing uploads', () => s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: u.key })));
        for (const up of r.Uploads ?? []) if (up.Key === u.key && up.UploadId && (up.Initiated?.getTime() ?? 0) >= record.createdAt - 60_000) ids.push(up.UploadId);
      }
      for (const UploadId of ids) {
        await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.key, UploadId })).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
      }
      await coordination.journal.delete(record.id);
    }
  }

  /** An object outside the tree (a version, a trash item's file) opened for reading, named `name` in its entry. */
  async function getWhole(Key: string, name: string, missing: string, range?: ByteRange): Promise<Opened> {
    try {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return await openedAnswer(name, r);
    } catch (e) {
      if (isNotFound(e)) throw new StorageError('not_found', missing);
      throw fromS3Error(e, 'Reading a file');
    }
  }

  /** Replaces an object outside the tree whole (`not_found` when it is gone). */
  async function replaceObject(Key: string, body: Readable, missing: string): Promise<void> {
    if (!(await s3Call('Reading file information', () => head(Key)))) throw new StorageError('not_found', missing);
    // A PutObject, or a multipart upload completed at once: either replaces the object whole.
    const received = await receive(s3, coordination, bucket, async () => Key, 'application/octet-stream', body, { ifExists: 'replace' });
    if (received.kind === 'single') await putObject(s3, { Bucket: bucket, Key, Body: received.body, ContentLength: received.body.length }, 'Rewriting a file');
    else await received.complete();
  }

  /** A file inside a trash item: a path `files` gave, which never leaves the item's area. */
  const trashFileKey = (owner: string, id: string, path: string): string => {
    if (path.split('/').some((p) => p === '' || p === '.' || p === '..')) throw new StorageError('invalid_path', 'Not a file of a trash item.');
    return `${trashArea(prefix, owner, id)}${path}`;
  };

  /** The item in a trash area: its name and whether it is a file; undefined when the area is empty. */
  async function trashedItem(area: string): Promise<{ name: string; isFile: boolean; size: number } | undefined> {
    let item: { name: string; isFile: boolean; size: number } | undefined;
    for await (const page of objectPages(s3, bucket, area)) {
      for (const o of page) {
        const rest = (o.Key as string).slice(area.length);
        const slash = rest.indexOf('/');
        item ??= { name: slash < 0 ? rest : rest.slice(0, slash), isFile: slash < 0, size: 0 };
      }
      if (item) item.size += await shownSum(page);
    }
    return item;
  }

  /**
   * The trash (TrashArea): `PREFIX.file-cloud/trash/<owner>/<id>/<name>`, plain
   * objects outside every user's tree. Moves in and out are journaled jobs
   * (a file: file-move.ts; a folder: folder-move.ts), finished by init or sweep
   * after a crash, so the item ends up whole on one side.
   */
  const trash: TrashArea = {
    async put(key, id): Promise<Trashed> {
      if (isRoot(key)) throw notFound();
      const area = trashArea(prefix, key.user, id);
      const lease = await holdEdits([key]);
      try {
        const file = await fileUnlessFolder(key);
        const parentMarker = isRoot(keyParent(key)) ? null : folderPrefix(prefix, keyParent(key));
        let gone: Trashed;
        if (file) {
          const size = await shownOf(objectKey(prefix, key), file.size);
          await startFileMove(s3, coordination, { bucket, from: objectKey(prefix, key), to: `${area}${keyName(key)}`, size: file.size, etag: file.etag, parentMarker });
          gone = { isFile: true, size, etag: file.etag };
        } else {
          const size = await sizeAt(key);
          if (size === undefined) throw notFound();
          // Its files' ETags as they move: the edit lease keeps every writer below the folder out until then.
          const from = folderPrefix(prefix, key);
          const files = new Map<string, string>();
          for await (const page of settledPages(key)) for (const o of page) if (!(o.Key as string).endsWith('/') && o.ETag) files.set((o.Key as string).slice(from.length), o.ETag);
          await startFolderMove(s3, coordination, { bucket, from, to: `${area}${keyName(key)}`, parentMarker, phase: 'copy' });
          gone = { isFile: false, size, files };
        }
        await events.emit({ type: 'deleted', key, isFile: gone.isFile, size: gone.size, kept: true });
        return gone;
      } finally {
        await lease.release();
      }
    },

    async find(owner, id) {
      const area = trashArea(prefix, owner, id);
      // A journaled move of this item left by a dead process is finished first (its lease is free);
      // one still held is under way, and what the area holds now is not the answer yet.
      await resumeFolderMoves(s3, coordination, 0, moveEdits);
      await resumeFileMoves(s3, coordination, 0);
      for (const kind of [MOVE_JOURNAL, FILE_MOVE_JOURNAL]) {
        for (const r of await coordination.journal.list(kind, Number.MAX_SAFE_INTEGER, 1000)) {
          const job = JSON.parse(r.data) as { from: string; to: string };
          if (job.to.startsWith(area) || job.from.startsWith(area)) return 'busy';
        }
      }
      const item = await trashedItem(area);
      return item && { isFile: item.isFile, size: item.size };
    },

    async restore(owner, id, to): Promise<Trashed> {
      const area = trashArea(prefix, owner, id);
      const lease = await holdForChange(to, [to]);
      try {
        const item = await trashedItem(area);
        if (!item) throw notFound();
        await look(to);
        if (isRoot(to) || (await sizeAt(to)) !== undefined) throw taken();
        const from = `${area}${item.name}`;
        if (item.isFile) {
          const h = await s3Call('Reading file information', () => head(from));
          if (!h) throw notFound();
          await startFileMove(s3, coordination, { bucket, from, to: objectKey(prefix, to), size: h.size, etag: h.etag, parentMarker: null });
        } else {
          await startFolderMove(s3, coordination, { bucket, from: `${from}/`, to: objectKey(prefix, to), parentMarker: null, phase: 'copy' });
        }
        await events.emit({ type: 'created', key: to, isFile: item.isFile, size: item.size, kept: true });
        return { isFile: item.isFile, size: item.size };
      } finally {
        await lease.release();
      }
    },

    async remove(owner, id) {
      let size = 0;
      for await (const page of objectPages(s3, bucket, trashArea(prefix, owner, id))) {
        size += await shownSum(page);
        await deleteKeys(s3, bucket, page.map((o) => o.Key as string));
      }
      return size;
    },

    async removeOwner(owner) {
      for await (const page of objectPages(s3, bucket, trashArea(prefix, owner, '').slice(0, -1))) await deleteKeys(s3, bucket, page.map((o) => o.Key as string));
    },
    async *files(owner, id) {
      const area = trashArea(prefix, owner, id);
      // Folder markers end in a slash and hold no bytes.
      for await (const page of objectPages(s3, bucket, area)) for (const o of page) if (!(o.Key as string).endsWith('/')) yield (o.Key as string).slice(area.length);
    },
    readFile: async (owner, id, path) => getWhole(trashFileKey(owner, id, path), path.slice(path.lastIndexOf('/') + 1), 'No such item in the trash.'),
    rewriteFile: async (owner, id, path, body) => replaceObject(trashFileKey(owner, id, path), body, 'No such item in the trash.'),
  };

  /** Versions (VersionArea): a server-side copy of the replaced object at its ETag, under `PREFIX.file-cloud/versions/`. */
  const versions: VersionArea = {
    async keep(key, id) {
      const h = isRoot(key) ? undefined : await headFile(key);
      if (!h) return undefined;
      const size = await shownOf(objectKey(prefix, key), h.size);
      await copyObject(s3, bucket, objectKey(prefix, key), versionKey(prefix, key.user, id), h.size, h.etag);
      return size;
    },
    read: (owner, id, name, range) => getWhole(versionKey(prefix, owner, id), name, 'No such version.', range),
    rewrite: (owner, id, body) => replaceObject(versionKey(prefix, owner, id), body, 'No such version.'),
    async remove(owner, id) {
      await deleteKeys(s3, bucket, [versionKey(prefix, owner, id)]);
    },
    async removeOwner(owner) {
      for await (const page of objectPages(s3, bucket, versionKey(prefix, owner, ''))) await deleteKeys(s3, bucket, page.map((o) => o.Key as string));
    },
  };

  return {
    capabilities: { atomicReplace: true, emulatedDirs: true, serverSideMove: true, atomicFolderMove: false, keepsModified: true },
    events,

    async init() {
      await s3Call(`Opening bucket ${bucket}`, () => s3.send(new HeadBucketCommand({ Bucket: bucket }))).catch((e: unknown) => {
        if (isNotFound((e as { cause?: unknown }).cause ?? e)) throw new StorageError('failed', `The bucket "${bucket}" does not exist; create it first.`, { cause: e });
        throw e;
      });
      // Moves another process left: finished now if their lease is free (the process is gone).
      await resumeFolderMoves(s3, coordination, 0, moveEdits);
      await resumeFileMoves(s3, coordination, 0);
    },

    async sweep({ staleMs }) {
      await sweepUploads(staleMs);
      await resumeFolderMoves(s3, coordination, staleMs, moveEdits);
      await resumeFileMoves(s3, coordination, staleMs);
    },

    stat: (key) => stat(key),
    parents: (key) => parents(key),
    list: (dir) => listPages(dir),
    // S3 lists keys in UTF-8 byte order, folders (`a/`) among files and after `a-b/`:
    // not the contract's order, so the entries (compact, no stat needed) are collected and sorted once.
    listSorted: (dir: StorageKey) => collectAndSort(listPages(dir)),
    walk: (dir, opts) => walk(dir, opts),
    async lookBeforeWrite(key) {
      if (isRoot(key)) return { at: 'folder', parent: undefined };
      const parent = keyParent(key);
      // Every folder above, in the same question: a write told they are all indexed names no folder it made (aboveIndexed).
      const ups = ancestorsOf(key);
      const kinds = await names.kinds(key.user, [pathOf(key), ...ups.map(pathOf)]);
      const at = kinds.get(pathOf(key));
      const aboveIndexed = ups.every((k) => kinds.get(pathOf(k)) === 'folder');
      if (isRoot(parent) || kinds.has(pathOf(parent))) return { at, parent: isRoot(parent) ? 'folder' : kinds.get(pathOf(parent)), aboveIndexed };
      // A parent the index lacks would refuse the write: another tool's folder, not rescanned yet, is asked for in the bucket.
      const there = await stat(parent);
      return { at, parent: there && (there.isFile ? 'file' : 'folder') };
    },
    read,
    stage,
    write: (key, body, opts) => stageAndCommit({ stage }, key, body, opts),
    resumable: createS3Resumable(s3, coordination, bucket, prefix, commitFrom),
    redate,
    mkdir,
    delete: remove,
    move,
    copy,
    trash,
    versions,
    ping: async () => void (await s3Call('Checking the bucket', () => s3.send(new HeadBucketCommand({ Bucket: bucket })))),
    close: async () => s3.destroy(),
  };
}
