import { open } from 'node:fs/promises';
import type { SFTPWrapper } from 'ssh2';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { isRoot, keyId, type StorageKey } from '../domain/storage-path.js';
import type { Operations } from '../services/operations.js';
import type { WriteLook } from '../storage/backend.js';
import { StagedWrite, StreamedRead, StreamedWrite } from './handles.js';
import { keyBelow, SHARED_WITH_ME, sftpPath, sftpPlace, sftpSegments } from './paths.js';
import { attrsOf, longname, STATUS, statusOf, type SftpAttrs } from './replies.js';

/** SFTP v3 open flags (SSH_FXF_*). */
const READ = 0x1;
const WRITE = 0x2;
const APPEND = 0x4;
const CREAT = 0x8;
const TRUNC = 0x10;
const EXCL = 0x20;
/** Names per READDIR answer: a large folder is sent in pages, read from storage page by page. */
export const READDIR_PAGE = 256;
/** The most a READ answers at once (OpenSSH asks for 32 KiB to 256 KiB). */
const MAX_READ = 256 * 1024;
/** Handles one SFTP session may hold open at once. */
const MAX_HANDLES = 256;
export type SftpServices = {
  /** The one door (src/services/operations.ts): every request is a call on `operations.as(principal)`. */
  readonly operations: Pick<Operations, 'as'>;
  /** Where writes are staged until their handle closes (data/tmp). */
  readonly stagingDir: string;
  readonly onFault: (err: unknown) => void;
  /** Called for each WRITE: its answer may wait for the others that arrived with it, to leave in one socket write. */
  readonly holdAnswers?: () => void;
};

type Dir = { readonly kind: 'dir'; readonly pages: AsyncIterator<{ name: string; entry: { isFile: boolean; size: number; modified: Date } }[]> };
type Writer = StagedWrite | StreamedWrite;
type Handle = Writer | StreamedRead | Dir;
const isWriter = (h: Handle): h is Writer => h instanceof StagedWrite || h instanceof StreamedWrite;

/** A place the caller names: a key, or `Shared with me` itself (a listing of received items, nothing else). */
type Target = { readonly kind: 'key'; readonly key: StorageKey } | { readonly kind: 'shared-top' };

/**
 * One SFTP session of a signed-in principal: SFTP requests translated into calls on the operation
 * layer (`operations.as(principal)`), which asks `decide` for every key with the grant that reaches
 * it; the services behind it apply quotas, WebDAV locks, versions and the change feed. It owns no
 * rule: what it keeps is SFTP's own (handles, staged writes, listing pages, the order of requests).
 */
export function serveSftp(sftp: SFTPWrapper, principal: Principal, deps: SftpServices): { close(): Promise<void> } {
  // The principal's operations for one SFTP request at a time (requests run in turn, see `run`): the
  // layer keeps each key's grant for as long as its object lives, so a session that kept one object
  // would go on using a grant revoked or narrowed since. Each request starts with a fresh one.
  let ops = deps.operations.as(principal);
  const handles = new Map<string, Handle>();
  /**
   * Files this session has open for writing, by key: to their writer they exist from the open on
   * (a FUSE mount such as sshfs stats the file it just created), to everyone else from the close.
   */
  const writing = new Map<string, Writer>();
  let nextHandle = 0;
  let closed = false;

  async function target(raw: string): Promise<Target> {
    const place = sftpPlace(principal.username, raw);
    if (place.kind === 'own') return { kind: 'key', key: place.key };
    if (place.kind === 'shared-top') return { kind: 'shared-top' };
    const item = (await ops.sharedWithMe()).find((i) => i.name === place.entry);
    if (!item) throw new AppError('not_found', `Nothing named "${place.entry}" is shared with you.`);
    return { kind: 'key', key: keyBelow(item.root, place.rest) };
  }

  /** The key of the item a request names: `Shared with me` itself is none (it lists, nothing more). */
  async function itemKey(raw: string): Promise<StorageKey> {
    const t = await target(raw);
    if (t.kind === 'shared-top') throw new AppError('forbidden', `Nothing can be changed at /${SHARED_WITH_ME} itself.`);
    return t.key;
  }

  const attrs = (e: { isFile: boolean; size: number; modified: Date }): SftpAttrs => attrsOf(e, !principal.readOnly);
  const folderNow = () => attrs({ isFile: false, size: 0, modified: new Date() });

  /**
   * Runs a request after every request before it, and answers its error as an SFTP status (the
   * answer itself is the request's). One at a time and in order, as OpenSSH's sftp-server does:
   * clients pipeline requests and count on that order (sshfs stats the file it is opening before
   * the open is answered; a close before the next request's stat).
   */
  let queue: Promise<void> = Promise.resolve();
  function run(reqId: number, op: () => Promise<void>): void {
    queue = queue.then(() => {
      ops = deps.operations.as(principal);
      return op().catch((e: unknown) => {
        const s = statusOf(e);
        if (s.fault) deps.onFault(e);
        if (!closed) sftp.status(reqId, s.code, s.message);
      });
    });
  }
  const ok = (reqId: number) => sftp.status(reqId, STATUS.OK);

  function addHandle(open: Handle): Buffer {
    if (handles.size >= MAX_HANDLES) throw new AppError('rate_limited', `A session may hold ${MAX_HANDLES} files and folders open at once.`);
    const id = Buffer.alloc(4);
    id.writeUInt32BE(nextHandle++ >>> 0);
    handles.set(id.toString('hex'), open);
    return id;
  }

  /** Runs `op` on the handle a request names, in turn. */
  function onHandle(reqId: number, id: Buffer, op: (h: Handle) => Promise<void>): void {
    run(reqId, async () => {
      const h = handles.get(id.toString('hex'));
      if (!h) throw new AppError('bad_request', 'No such handle.');
      await op(h);
    });
  }

  async function openFile(raw: string, flags: number): Promise<Buffer> {
    if (!(flags & WRITE)) {
      const key = await itemKey(raw);
      const entry = await ops.stat(key);
      if (!entry.isFile) throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
      return addHandle(new StreamedRead(key, entry, async (start) => (await ops.read(key, { start, end: entry.size - 1 })).stream));
    }
    const key = await itemKey(raw);
    if (isRoot(key)) throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
    const { existing, parentIsFolder, look } = await ops.lookBeforeWrite(key);
    if (existing === 'folder') throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
    if (existing && flags & EXCL) throw new AppError('already_exists', 'A file exists at this path.');
    if (!existing && !(flags & CREAT)) throw new AppError('not_found', 'Nothing exists at this path.');
    if (!existing && !parentIsFolder) throw new AppError('not_found', 'The parent folder does not exist; create it first (mkdir).');
    // Written at an offset into an existing file: a staged copy, so storage keeps the whole file until the close.
    const keep = existing !== undefined && !(flags & TRUNC);
    const writer = keep || flags & (READ | APPEND) ? await StagedWrite.open(deps.stagingDir, key, { append: (flags & APPEND) !== 0, from: keep ? async () => (await ops.read(key)).stream : undefined }) : streamed(key, look);
    try {
      const id = addHandle(writer);
      writing.set(keyId(key), writer);
      return id;
    } catch (e) {
      await drop(writer);
      throw e;
    }
  }

  /**
   * A new (or truncated) file written without reading: its bytes go straight into the upload, which
   * starts now (with the look the OPEN just made) and commits at the close.
   */
  function streamed(key: StorageKey, look: WriteLook): StreamedWrite {
    return new StreamedWrite(key, (body) => ops.withLocks.put(key, body, undefined, undefined, look));
  }

  /** A write given up: nothing of it reaches storage. */
  async function drop(w: Writer): Promise<void> {
    if (w instanceof StagedWrite) await w.finish();
    else await w.abort();
  }

  async function commit(w: Writer): Promise<void> {
    try {
      if (w instanceof StagedWrite) await commitStaged(w);
      else {
        await w.finish();
        // A time the client set while the bytes were already on their way (`sftp -p` sets it just before the close).
        if (w.modified) await ops.withLocks.redate(w.key, w.modified);
      }
    } finally {
      if (writing.get(keyId(w.key)) === w) writing.delete(keyId(w.key));
    }
  }

  async function commitStaged(w: StagedWrite): Promise<void> {
    await w.finish(async (path, size) => {
      // Opened here, not lazily: a refusal before the first byte (the quota) must not leave a stream
      // that opens the staging file after it is gone and fails with no one listening.
      const body = (await open(path, 'r')).createReadStream();
      try {
        await ops.withLocks.put(w.key, body, size, w.modified);
      } finally {
        body.destroy();
      }
    });
  }

  async function* sharedPages() {
    const items = await ops.sharedWithMe();
    const now = new Date();
    yield items.map((i) => ({ name: i.name, entry: { isFile: i.isFile, size: 0, modified: now } }));
  }

  async function* keyPages(key: StorageKey) {
    if (isRoot(key) && key.user === principal.username && (await ops.sharedWithMe()).length > 0) {
      yield [{ name: SHARED_WITH_ME, entry: { isFile: false, size: 0, modified: new Date() } }];
    }
    for await (const page of await ops.listSorted(key)) yield page.map((e) => ({ name: e.name, entry: e }));
  }

  async function openDir(raw: string): Promise<Buffer> {
    const t = await target(raw);
    if (t.kind === 'shared-top') return addHandle({ kind: 'dir', pages: sharedPages() });
    const entry = await ops.stat(t.key);
    if (entry.isFile) throw new AppError('not_a_directory', 'A file is at this path, where a folder is needed.');
    return addHandle({ kind: 'dir', pages: keyPages(t.key)[Symbol.asyncIterator]() });
  }

  /** Up to READDIR_PAGE names; what a storage page holds beyond that waits for the next READDIR. */
  const pending = new WeakMap<Dir, { name: string; entry: { isFile: boolean; size: number; modified: Date } }[]>();
  async function readDir(reqId: number, d: Dir): Promise<void> {
    let batch = pending.get(d) ?? [];
    while (batch.length === 0) {
      const next = await d.pages.next();
      if (next.done) return sftp.status(reqId, STATUS.EOF);
      batch = next.value;
    }
    pending.set(d, batch.slice(READDIR_PAGE));
    const now = new Date();
    sftp.name(
      reqId,
      batch.slice(0, READDIR_PAGE).map(({ name, entry }) => {
        const a = attrs(entry);
        return { filename: name, longname: longname(name, a, principal.username, now), attrs: a };
      }),
    );
  }

  async function rename(reqId: number, from: string, to: string, overwrite: boolean): Promise<void> {
    await ops.withLocks.move(await itemKey(from), await itemKey(to), overwrite);
    ok(reqId);
  }

  async function remove(reqId: number, raw: string, folder: boolean): Promise<void> {
    const key = await itemKey(raw);
    const entry = await ops.stat(key);
    if (folder !== !entry.isFile) throw new AppError(folder ? 'not_a_directory' : 'is_a_directory', folder ? 'A file is at this path; remove it with rm.' : 'A folder is at this path; remove it with rmdir.');
    if (folder) {
      const first = await (await ops.listSorted(key))[Symbol.asyncIterator]().next();
      if (!first.done && first.value.length > 0) throw new AppError('forbidden', 'The folder is not empty.');
    }
    await ops.withLocks.delete(key);
    ok(reqId);
  }

  sftp.on('REALPATH', (reqId: number, raw: string) => {
    run(reqId, async () => {
      const path = sftpPath(sftpSegments(raw));
      sftp.name(reqId, [{ filename: path, longname: path, attrs: {} as SftpAttrs }]);
    });
  });
  const stat = (reqId: number, raw: string) =>
    run(reqId, async () => {
      const t = await target(raw);
      if (t.kind === 'shared-top') return sftp.attrs(reqId, folderNow());
      const own = writing.get(keyId(t.key));
      sftp.attrs(reqId, own ? attrs({ isFile: true, size: own.size, modified: own.modified ?? new Date() }) : attrs(await ops.stat(t.key)));
    });
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);
  sftp.on('OPEN', (reqId: number, raw: string, flags: number) => run(reqId, async () => sftp.handle(reqId, await openFile(raw, flags & (READ | WRITE | APPEND | CREAT | TRUNC | EXCL)))));
  sftp.on('OPENDIR', (reqId: number, raw: string) => run(reqId, async () => sftp.handle(reqId, await openDir(raw))));
  sftp.on('READ', (reqId: number, id: Buffer, offset: number, length: number) =>
    onHandle(reqId, id, async (h) => {
      if (h instanceof StreamedWrite) throw new AppError('forbidden', 'This handle was not opened for reading.');
      if (h instanceof StagedWrite || h instanceof StreamedRead) {
        const data = await h.read(offset, Math.min(length, MAX_READ));
        return data ? sftp.data(reqId, data) : sftp.status(reqId, STATUS.EOF);
      }
      throw new AppError('is_a_directory', 'This handle is a folder.');
    }),
  );
  sftp.on('WRITE', (reqId: number, id: Buffer, offset: number, data: Buffer) => {
    deps.holdAnswers?.();
    onHandle(reqId, id, async (h) => {
      if (!isWriter(h)) throw new AppError('forbidden', 'This handle was not opened for writing.');
      const max = ops.maxUploadBytes;
      if (max !== undefined && Number.isFinite(max) && offset + data.length > max) throw new AppError('too_large', `The file would be larger than this server accepts (${max} bytes).`);
      await h.write(offset, data);
      ok(reqId);
    });
  });
  sftp.on('FSTAT', (reqId: number, id: Buffer) =>
    onHandle(reqId, id, async (h) => {
      if (isWriter(h)) return sftp.attrs(reqId, attrs({ isFile: true, size: h.size, modified: h.modified ?? new Date() }));
      if (h instanceof StreamedRead) return sftp.attrs(reqId, attrs(h.entry));
      sftp.attrs(reqId, folderNow());
    }),
  );
  // A modification time set on a file open for writing (`sftp -p`, `scp -p`) goes with the file to
  // storage at the close; one set by path on a stored file (rsync's utimes through sshfs, after the
  // close) dates it there. Modes, and times of folders, are accepted and left alone, as clients set
  // them after every upload; a size on a file open for writing truncates its staging.
  const keepTime = (w: Writer, a: Partial<SftpAttrs>) => {
    if (a.mtime !== undefined) w.modified = new Date(a.mtime * 1000);
  };
  sftp.on('FSETSTAT', (reqId: number, id: Buffer, a: Partial<SftpAttrs>) =>
    onHandle(reqId, id, async (h) => {
      if (a.size !== undefined) {
        if (!isWriter(h)) throw new AppError('forbidden', 'Only a file open for writing can change its size.');
        await h.truncate(a.size);
      }
      if (isWriter(h)) keepTime(h, a);
      ok(reqId);
    }),
  );
  sftp.on('SETSTAT', (reqId: number, raw: string, a: Partial<SftpAttrs>) =>
    run(reqId, async () => {
      if (a.size !== undefined) throw new AppError('method_not_allowed', 'A file\'s size changes only through a handle open for writing.');
      const t = await target(raw);
      if (t.kind === 'key') {
        // Asked as the write it would be; only a file this session is writing takes the time (see above).
        const { existing } = await ops.lookBeforeWrite(t.key);
        const own = writing.get(keyId(t.key));
        if (!existing && !own) throw new AppError('not_found', 'Nothing exists at this path.');
        if (own) keepTime(own, a);
        else if (a.mtime !== undefined && existing === 'file') await ops.withLocks.redate(t.key, new Date(a.mtime * 1000));
      }
      ok(reqId);
    }),
  );
  sftp.on('CLOSE', (reqId: number, id: Buffer) =>
    onHandle(reqId, id, async (h) => {
      handles.delete(id.toString('hex'));
      if (isWriter(h)) await commit(h);
      else if (h instanceof StreamedRead) h.close();
      else await h.pages.return?.();
      ok(reqId);
    }),
  );
  sftp.on('READDIR', (reqId: number, id: Buffer) =>
    onHandle(reqId, id, async (h) => {
      if (!('pages' in h)) throw new AppError('not_a_directory', 'This handle is a file.');
      await readDir(reqId, h);
    }),
  );
  sftp.on('MKDIR', (reqId: number, raw: string) =>
    run(reqId, async () => {
      await ops.withLocks.mkdir(await itemKey(raw));
      ok(reqId);
    }),
  );
  sftp.on('REMOVE', (reqId: number, raw: string) => run(reqId, () => remove(reqId, raw, false)));
  sftp.on('RMDIR', (reqId: number, raw: string) => run(reqId, () => remove(reqId, raw, true)));
  sftp.on('RENAME', (reqId: number, from: string, to: string) => run(reqId, () => rename(reqId, from, to, false)));
  sftp.on('EXTENDED', (reqId: number, name: string, data: Buffer | undefined) => {
    const pair = name === 'posix-rename@openssh.com' && data ? twoStrings(data) : undefined;
    if (!pair) return sftp.status(reqId, STATUS.OP_UNSUPPORTED, `${name} is not supported.`);
    run(reqId, () => rename(reqId, pair[0], pair[1], true));
  });

  return {
    /** The client went away: staged writes are dropped (nothing reaches storage), reads and listings stop. */
    async close() {
      closed = true;
      await queue;
      const open = [...handles.values()];
      handles.clear();
      writing.clear();
      await Promise.all(
        open.map(async (h) => {
          if (isWriter(h)) await drop(h);
          else if (h instanceof StreamedRead) h.close();
          else await h.pages.return?.();
        }),
      );
    },
  };
}

/** The two SSH strings of a posix-rename request (old path, new path), or undefined when malformed. */
function twoStrings(data: Buffer): [string, string] | undefined {
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < 2; i++) {
    if (at + 4 > data.length) return undefined;
    const len = data.readUInt32BE(at);
    at += 4;
    if (at + len > data.length) return undefined;
    out.push(data.subarray(at, at + len).toString('utf8'));
    at += len;
  }
  return [out[0] as string, out[1] as string];
}
