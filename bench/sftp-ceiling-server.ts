/**
 * The "ssh2 ceiling" (issue 52): a bare SFTP server on the same `ssh2` library, algorithms and
 * Node as File Cloud's front end, that does the least a file upload needs and nothing else — no
 * accounts, rules, quotas, index, change feed or audit. The SFTP bench runs it beside File Cloud
 * and `rclone serve sftp` for the 4 KiB puts (scenarios/sftp.ts), so the rows can say how far
 * File Cloud's own code is from what a server built on ssh2 reaches on this machine, with and
 * without the durability File Cloud keeps.
 *
 *   --durable   a file written to a staging name, fsynced at CLOSE, then renamed to its name: the
 *               contract's all-or-nothing upload (CONTRACT "SFTP": "uploads all-or-nothing"),
 *               without metadata;
 *   (without)   the file written in place at its name, no fsync: what rclone serve sftp does.
 *   --index F   (with --durable) after the rename, the least an index adds before CLOSE's answer:
 *               the file's entry, its change-feed row and its folder's stamp committed to the
 *               SQLite file F on the event loop (bench/lib/ceiling-index.ts; stop 78).
 *   --pool      (with --durable --index) nothing that waits for the disk on the event loop, as a
 *               server with other clients must: the staging file opened in libuv's thread pool,
 *               a small file's bytes held until CLOSE and written, fsynced and closed there in one
 *               job (File Cloud's native durable write, src/storage/local/fs-ops.ts), the rename
 *               on the event loop (a metadata step, as File Cloud's), and the index committed in a
 *               worker thread of its own, each file a message there and back (stop 79).
 *   --index-on-loop  (with --pool) the same, but the index committed on the event loop: SQLite's
 *               commit in write-ahead-log mode waits for no disk (its checkpoints do, now and then).
 *
 * Without --pool every file-system call is synchronous, on the event loop: for one client that
 * waits for each answer (OpenSSH's `sftp -b` put: STAT, OPEN, WRITE, CLOSE a file) no trip through
 * the thread pool is the lowest latency Node has, and every other client waits meanwhile. Only what `sftp -b` uses for `mkdir` and `put` is answered
 * (REALPATH, STAT, LSTAT, FSTAT, OPEN for writing, WRITE, CLOSE, MKDIR, SETSTAT, FSETSTAT); anything
 * else is OP_UNSUPPORTED.
 *
 * `node dist/bench/sftp-ceiling-server.js --port P --root DIR --user NAME --authorized-key PUB
 *  --host-key FILE [--durable [--index FILE [--pool [--index-on-loop]]]]`
 */
import { randomBytes } from 'node:crypto';
import { close, closeSync, fstatSync, fsyncSync, mkdirSync, open, openSync, readFileSync, renameSync, statSync, unlink, unlinkSync, write, writeSync, type Stats } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ssh2, { type Connection, type SFTPWrapper } from 'ssh2';
import { SFTP_ALGORITHMS } from '../src/sftp/server.js';
import { durableWrite } from '../src/storage/local/fs-ops.js';
import { SMALL_BODY } from '../src/storage/local/write.js';
import { openCeilingIndex, openCeilingIndexThread } from './lib/ceiling-index.js';

const { values: a } = parseArgs({ options: { port: { type: 'string' }, root: { type: 'string' }, user: { type: 'string' }, 'authorized-key': { type: 'string' }, 'host-key': { type: 'string' }, durable: { type: 'boolean' }, index: { type: 'string' }, pool: { type: 'boolean' }, 'index-on-loop': { type: 'boolean' } } });
const root = a.root ?? '.';
const durable = a.durable === true;
const staging = join(root, '.staging');
if (durable) mkdirSync(staging, { recursive: true });
const pool = durable && a.index !== undefined && a.pool === true;
const loopIndex = a['index-on-loop'] === true;
const index = durable && a.index !== undefined && (!pool || loopIndex) ? openCeilingIndex(a.index) : undefined;
const indexThread = pool && !loopIndex && a.index !== undefined ? openCeilingIndexThread(a.index) : undefined;
const allowed = ssh2.utils.parseKey(a['authorized-key'] ?? '');
if (allowed instanceof Error) throw allowed;

/** SFTP's status codes (draft-ietf-secsh-filexfer-02). */
const STATUS = { OK: 0, NO_SUCH_FILE: 2, FAILURE: 4, OP_UNSUPPORTED: 8 } as const;
/** A request's failure as OpenSSH's server answers it. */
const statusOf = (e: unknown) => ((e as NodeJS.ErrnoException).code === 'ENOENT' ? STATUS.NO_SUCH_FILE : STATUS.FAILURE);

/** SSH_FXF_WRITE. */
const WRITE = 0x02;

/** A handle's number (-1 for a handle this server did not give). */
const keyOf = (id: Buffer) => (id.length === 4 ? id.readUInt32BE(0) : -1);
/** A path the client names, on disk under root ('..' cannot leave it: normalized from '/'). */
const onDisk = (p: string) => join(root, posix.normalize(`/${p}`));
const attrsOf = (s: Stats) => ({ mode: s.mode, uid: s.uid, gid: s.gid, size: s.size, atime: Math.floor(s.atimeMs / 1000), mtime: Math.floor(s.mtimeMs / 1000) });

function serve(sftp: SFTPWrapper): void {
  const handles = new Map<number, { fd: number; staged?: string; name: string; size: number }>();
  let next = 0;
  const handleOf = (id: Buffer) => handles.get(keyOf(id));
  /** Runs one request's synchronous work; a thrown system error answers as OpenSSH's server maps it. */
  const run = (reqId: number, work: () => void) => {
    try {
      work();
    } catch (e) {
      sftp.status(reqId, statusOf(e));
    }
  };
  sftp.on('REALPATH', (reqId: number, p: string) => {
    const path = posix.normalize(`/${p}`);
    sftp.name(reqId, [{ filename: path, longname: path, attrs: {} as ssh2.Attributes }]);
  });
  const stat = (reqId: number, p: string) => run(reqId, () => sftp.attrs(reqId, attrsOf(statSync(onDisk(p))) as ssh2.Attributes));
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);
  if (pool) servePooled(sftp);
  else {
    sftp.on('OPEN', (reqId: number, p: string, flags: number) =>
      run(reqId, () => {
        if (!(flags & WRITE)) return sftp.status(reqId, STATUS.OP_UNSUPPORTED);
        const name = onDisk(p);
        const staged = durable ? join(staging, randomBytes(12).toString('hex')) : undefined;
        const fd = openSync(staged ?? name, staged ? 'wx' : 'w');
        const id = next++;
        handles.set(id, { fd, name, size: 0, ...(staged ? { staged } : {}) });
        const handle = Buffer.alloc(4);
        handle.writeUInt32BE(id, 0);
        sftp.handle(reqId, handle);
      }),
    );
    sftp.on('WRITE', (reqId: number, id: Buffer, offset: number, data: Buffer) =>
      run(reqId, () => {
        const h = handleOf(id);
        if (!h) return sftp.status(reqId, STATUS.FAILURE);
        for (let done = 0; done < data.length; ) done += writeSync(h.fd, data, done, data.length - done, offset + done);
        h.size = Math.max(h.size, offset + data.length);
        sftp.status(reqId, STATUS.OK);
      }),
    );
    sftp.on('FSTAT', (reqId: number, id: Buffer) =>
      run(reqId, () => {
        const h = handleOf(id);
        if (!h) return sftp.status(reqId, STATUS.FAILURE);
        sftp.attrs(reqId, attrsOf(fstatSync(h.fd)) as ssh2.Attributes);
      }),
    );
    sftp.on('CLOSE', (reqId: number, id: Buffer) =>
      run(reqId, () => {
        const h = handleOf(id);
        if (!h) return sftp.status(reqId, STATUS.FAILURE);
        handles.delete(keyOf(id));
        try {
          if (h.staged) fsyncSync(h.fd);
        } finally {
          closeSync(h.fd);
        }
        if (h.staged) renameSync(h.staged, h.name);
        index?.(a.user ?? '', relative(root, h.name), h.size);
        sftp.status(reqId, STATUS.OK);
      }),
    );
  }
  sftp.on('MKDIR', (reqId: number, p: string) => run(reqId, () => (mkdirSync(onDisk(p)), sftp.status(reqId, STATUS.OK))));
  sftp.on('SETSTAT', (reqId: number) => sftp.status(reqId, STATUS.OK));
  sftp.on('FSETSTAT', (reqId: number) => sftp.status(reqId, STATUS.OK));
  for (const other of ['OPENDIR', 'READDIR', 'READ', 'REMOVE', 'RMDIR', 'RENAME', 'READLINK', 'SYMLINK', 'EXTENDED']) {
    sftp.on(other, (reqId: number) => sftp.status(reqId, STATUS.OP_UNSUPPORTED));
  }
  // The client's EOF ends the subsystem: the channel closes, as OpenSSH's sftp-server's does when it exits.
  sftp.on('end', () => sftp.end());
  // A session that ends midway leaves no descriptor open and, durable, no staging file.
  sftp.on('close', () => {
    for (const h of handles.values()) {
      closeSync(h.fd);
      if (h.staged) unlinkSync(h.staged);
    }
    handles.clear();
  });
}

/**
 * A --pool handle: its descriptor once the pool has opened the staging file; the bytes held from the
 * file's start and where they end, until anything is `written` at its place.
 */
type Pooled = { fd: Promise<number>; staged: string; name: string; held: Buffer[]; at: number; written: boolean; size: number };

/**
 * OPEN, WRITE, FSTAT and CLOSE for --pool: every step that waits for the disk in the thread pool,
 * the index in its worker thread. A small file's bytes are held and go with CLOSE's one job (File
 * Cloud's small body, SMALL_BODY); a write that is not the next byte, or past it, writes what is held
 * first, and from then on every write goes at its place.
 */
function servePooled(sftp: SFTPWrapper): void {
  const handles = new Map<number, Pooled>();
  let next = 0;
  const failed = (e: unknown, reqId: number) => sftp.status(reqId, statusOf(e));
  const opened = (path: string) => new Promise<number>((res, rej) => open(path, 'wx', (e, fd) => (e ? rej(e) : res(fd))));
  const writeAll = (fd: number, data: Buffer, at: number) =>
    new Promise<void>((res, rej) => {
      const from = (done: number) => (done === data.length ? res() : write(fd, data, done, data.length - done, at + done, (e, n) => (e ? rej(e) : from(done + n))));
      from(0);
    });
  /** Writes what is held, from the file's start. */
  const flush = async (h: Pooled) => {
    const data = Buffer.concat(h.held);
    h.held = [];
    await writeAll(await h.fd, data, 0);
  };
  sftp.on('OPEN', (reqId: number, p: string, flags: number) => {
    if (!(flags & WRITE)) return sftp.status(reqId, STATUS.OP_UNSUPPORTED);
    // Answered at once, the staging file created in the pool meanwhile (as File Cloud creates an SFTP put's early):
    // a failure to create it is CLOSE's.
    const staged = join(staging, randomBytes(12).toString('hex'));
    const fd = opened(staged);
    fd.catch(() => undefined);
    const id = next++;
    handles.set(id, { fd, staged, name: onDisk(p), held: [], at: 0, written: false, size: 0 });
    const handle = Buffer.alloc(4);
    handle.writeUInt32BE(id, 0);
    sftp.handle(reqId, handle);
  });
  sftp.on('WRITE', (reqId: number, id: Buffer, offset: number, data: Buffer) => {
    const h = handles.get(keyOf(id));
    if (!h) return sftp.status(reqId, STATUS.FAILURE);
    h.size = Math.max(h.size, offset + data.length);
    if (!h.written && offset === h.at && h.at + data.length <= SMALL_BODY) {
      h.held.push(Buffer.from(data));
      h.at += data.length;
      return sftp.status(reqId, STATUS.OK);
    }
    h.written = true;
    (h.held.length > 0 ? flush(h) : Promise.resolve())
      .then(async () => writeAll(await h.fd, data, offset))
      .then(
        () => sftp.status(reqId, STATUS.OK),
        (e: unknown) => failed(e, reqId),
      );
  });
  sftp.on('FSTAT', (reqId: number, id: Buffer) => {
    const h = handles.get(keyOf(id));
    if (!h) return sftp.status(reqId, STATUS.FAILURE);
    sftp.attrs(reqId, { mode: 0o100644, uid: 0, gid: 0, size: h.size, atime: 0, mtime: 0 } as ssh2.Attributes);
  });
  sftp.on('CLOSE', (reqId: number, id: Buffer) => {
    const h = handles.get(keyOf(id));
    if (!h) return sftp.status(reqId, STATUS.FAILURE);
    handles.delete(keyOf(id));
    // Held bytes (a small file, whole from its start) go with the fsync in one job; otherwise they were written.
    const bytes = h.held;
    h.held = [];
    h.fd
      .then((fd) => durableWrite(fd, bytes))
      .then(async () => {
        renameSync(h.staged, h.name);
        if (indexThread) await indexThread(a.user ?? '', relative(root, h.name), h.size);
        else index?.(a.user ?? '', relative(root, h.name), h.size);
      })
      .then(
        () => sftp.status(reqId, STATUS.OK),
        (e: unknown) => failed(e, reqId),
      );
  });
  sftp.on('close', () => {
    for (const h of handles.values()) {
      h.fd.then((fd) => close(fd, () => unlink(h.staged, () => undefined))).catch(() => undefined);
    }
    handles.clear();
  });
}

new ssh2.Server({ hostKeys: [readFileSync(a['host-key'] ?? '')], algorithms: SFTP_ALGORITHMS as unknown as ssh2.Algorithms, ident: 'SftpCeiling' }, (client: Connection) => {
  // As File Cloud's front end: a client waits for each answer of a small file.
  (client as Connection & { setNoDelay(on: boolean): unknown }).setNoDelay(true);
  client.on('authentication', (ctx) => {
    if (ctx.method !== 'publickey' || ctx.username !== a.user) return ctx.reject(['publickey']);
    if (ctx.key.algo !== allowed.type || !ctx.key.data.equals(allowed.getPublicSSH())) return ctx.reject(['publickey']);
    if (ctx.signature && ctx.blob && allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
    ctx.accept();
  });
  client.on('ready', () => {
    client.on('session', (accept) => {
      const session = accept();
      session.on('sftp', (acceptSftp) => serve(acceptSftp()));
    });
  });
  client.on('error', () => undefined);
}).listen(Number(a.port), '127.0.0.1');
