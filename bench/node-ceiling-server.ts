/**
 * The "Node ceiling" (issue 30): a bare `node:http` server, with as many
 * `node:cluster` workers as File Cloud's default, that does the least work
 * the contract asks of a request and nothing else. The bench runs it beside
 * File Cloud so a row can say how far File Cloud's own code is from what
 * Node itself allows on this machine (bench/lib/node-ceiling.ts starts it).
 *
 *   --mode get   an authorized 4 KiB GET: the SQLite change stamp (PRAGMA
 *                data_version, as the token cache reads it), SHA-256 of the
 *                Bearer token looked up in a Map, lstat of the user root and
 *                of every folder on the way (the confinement walk), open with
 *                O_NOFOLLOW, fstat, read, close, ten headers and the body,
 *                one pino line. A file over LARGE bytes (issue 53's large-file
 *                ceiling) is streamed instead, the way `--send` names
 *                (SENDS; the default, loop, used the least CPU per GiB);
 *   --mode put   a durable upload: the same token check and walk of the
 *                folder, the body staged in a new file (one writev), fsync,
 *                close, link(2) to its name (created or 409), unlink of the
 *                staging name, 201 with a JSON body, one pino line. No
 *                metadata: no usage, search index or change journal. A body
 *                over LARGE bytes is streamed to the staging file instead,
 *                its SHA-256 taken on the way (PUT answers carry it: CONTRACT
 *                "Sync"), then fsync, link.
 *   --index FILE (with --mode put) the least an index adds (stop 78): before the 201,
 *                one SQLite transaction on the event loop in FILE (WAL,
 *                synchronous=NORMAL, as File Cloud's store): the file's entry
 *                (user, path, name, size, time, etag, a random id: the answer's
 *                sync fields), its change-feed row, and the stamp of the folder
 *                above it (its etag: CONTRACT "Changes"). The folder is
 *                indexed when the first file lands in it.
 *   --index-group (with --index) the same, committed for every file that
 *                finishes in one turn of the event loop in one transaction
 *                at that turn's end (stop 80): the group commit.
 *
 * `node dist/bench/node-ceiling-server.js --mode get|put --port P --root DIR
 *  --workers N --token T --db FILE --log FILE [--send stream|loop|write] [--index FILE [--index-group]]`; URLs are `/storage/<user>/<path>`
 * with the files under `<root>/<user>/<path>`.
 */
import Database from 'better-sqlite3';
import cluster from 'node:cluster';
import { createHash, randomBytes } from 'node:crypto';
import { close, closeSync, constants, createReadStream, fstatSync, lstatSync, openSync, read, readSync, realpathSync } from 'node:fs';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { openCeilingIndex, openCeilingIndexGrouped } from './lib/ceiling-index.js';

const { values: a } = parseArgs({ options: { mode: { type: 'string' }, port: { type: 'string' }, root: { type: 'string' }, workers: { type: 'string' }, token: { type: 'string' }, db: { type: 'string' }, log: { type: 'string' }, send: { type: 'string' }, index: { type: 'string' }, 'index-group': { type: 'boolean' } } });
const mode = a.mode === 'put' ? 'put' : 'get';
const workers = Math.max(1, Number(a.workers ?? 1));
const root = a.root ?? '.';

/** Bodies above this are streamed (the large-file ceiling); up to it, read or taken whole (the 4 KiB ceiling). */
const LARGE = 1024 * 1024;
/** Read size and write buffer for a large body: what the fastest of the ways below was measured with (docs/performance.md, "Large files and their Node ceiling"). */
const CHUNK = 1024 * 1024;

const readAt = promisify(read);
/** Resolves when `res` took `chunk` (its write called back): only then may the buffer be used again. */
const written = (res: ServerResponse, chunk: Buffer) => new Promise<void>((resolve, reject) => res.write(chunk, (e) => (e ? reject(e) : resolve())));
/** Resolves when `res` can take more, or is closed. */
const drained = (res: ServerResponse) => new Promise<void>((resolve) => {
  const done = () => {
    res.off('drain', done).off('close', done);
    resolve();
  };
  res.on('drain', done).on('close', done);
});

/**
 * The plain-Node ways of sending the `size` bytes of the open `fd` as the body
 * of `res` (headers written), compared for issue 53; each closes `fd`.
 * stream: node:fs's read stream piped to the answer; loop: reads into two
 * reused buffers, one read while the other is written; write: `res.write` of a
 * new buffer per read, waiting for 'drain' when the socket is full. loop is
 * the default: on 2026-12-03 it took ~0.65 s of CPU per GiB against ~0.9 for
 * the other two (a fresh 1 MiB buffer per read is mostly page faults), at any
 * read size from 1 to 4 MiB (docs/performance.md, "Large files and their Node ceiling").
 */
const SENDS: Record<string, (fd: number, size: number, res: ServerResponse) => Promise<void>> = {
  stream: (fd, size, res) => pipeline(createReadStream('', { fd, start: 0, end: size - 1, highWaterMark: CHUNK }), res),
  loop: async (fd, size, res) => {
    try {
      const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
      const free: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
      for (let pos = 0, i = 0; pos < size && !res.destroyed; i ^= 1) {
        await free[i];
        const buffer = buffers[i] as Buffer;
        const { bytesRead } = await readAt(fd, buffer, 0, Math.min(CHUNK, size - pos), pos);
        if (bytesRead === 0) throw new Error('the file got shorter');
        pos += bytesRead;
        free[i] = written(res, buffer.subarray(0, bytesRead));
      }
      await Promise.all(free);
      res.end();
    } finally {
      close(fd, () => undefined);
    }
  },
  write: async (fd, size, res) => {
    try {
      for (let pos = 0; pos < size && !res.destroyed; ) {
        const { bytesRead, buffer } = await readAt(fd, Buffer.allocUnsafe(CHUNK), 0, Math.min(CHUNK, size - pos), pos);
        if (bytesRead === 0) throw new Error('the file got shorter');
        pos += bytesRead;
        if (!res.write(buffer.subarray(0, bytesRead))) await drained(res);
      }
      res.end();
    } finally {
      close(fd, () => undefined);
    }
  },
};
const chosen = SENDS[a.send ?? 'loop'];
if (!chosen) throw new Error(`--send must be one of ${Object.keys(SENDS).join(', ')}`);
const sendLarge = chosen;

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('exit', () => process.exit(1));
} else {
  serve();
}

function serve(): void {
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');
  const tokens = new Map([[sha(a.token ?? ''), 'admin']]);
  const db = new Database(a.db ?? ':memory:');
  db.pragma('journal_mode = WAL');
  const stamp = db.prepare('PRAGMA data_version').pluck();
  const log = pino({ base: undefined }, pino.destination({ dest: a.log ?? '/dev/null', sync: true }));
  const index = a.index === undefined ? undefined : a['index-group'] ? openCeilingIndexGrouped(a.index) : openCeilingIndex(a.index);
  const staging = join(root, '.staging');
  const prefix = '/storage/';
  const roots = new Map<string, string>();
  const userRoot = (user: string): string => roots.get(user) ?? (roots.set(user, realpathSync(join(root, user))), roots.get(user) as string);

  const fail = (res: ServerResponse, status: number, code: string) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { code, message: code } }));
  };
  /** The file's path on disk (its folders walked), or undefined with an answer already given. */
  const admit = (req: IncomingMessage, res: ServerResponse): string | undefined => {
    stamp.get();
    const auth = req.headers.authorization ?? '';
    const user = auth.startsWith('Bearer ') ? tokens.get(sha(auth.slice(7))) : undefined;
    const url = req.url ?? '';
    if (!user) return void fail(res, 401, 'unauthorized');
    if (!url.startsWith(prefix)) return void fail(res, 404, 'not_found');
    const segments = decodeURIComponent(url.slice(prefix.length).split('?')[0] as string).split('/');
    if (segments.shift() !== user || segments.some((s) => s === '' || s === '.' || s === '..')) return void fail(res, 403, 'forbidden');
    // The confinement walk: the user root (its real path, resolved once, as File Cloud does) and
    // each folder on the way is a real folder, not a link.
    let dir = userRoot(user);
    for (let i = 0; i < segments.length; i++) {
      if (!lstatSync(dir).isDirectory()) return void fail(res, 409, 'invalid_path');
      if (i < segments.length - 1) dir = join(dir, segments[i] as string);
    }
    return join(dir, segments.at(-1) as string);
  };
  /** A large body streamed into a staging file (its SHA-256 taken on the way), fsynced, linked to its name; the answer's status. */
  const receiveLarge = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<number> => {
    const name = join(staging, randomBytes(12).toString('hex'));
    const hash = createHash('sha256');
    const h = await open(name, 'wx');
    try {
      // flush: fsync before the handle closes, so the file is durable before it gets a name.
      await pipeline(
        req,
        async function* (body: AsyncIterable<Buffer>) {
          for await (const chunk of body) {
            hash.update(chunk);
            yield chunk;
          }
        },
        h.createWriteStream({ flush: true, highWaterMark: CHUNK }),
      );
    } catch (e) {
      await unlink(name).catch(() => undefined);
      throw e;
    }
    let status = 201;
    await link(name, path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      status = 409;
    });
    await unlink(name);
    if (status === 201) res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ files_written: ['x'], sha256: hash.digest('hex') }));
    else fail(res, 409, 'already_exists');
    return status;
  };
  const logLine = (req: IncomingMessage, status: number, started: number) => log.info({ reqId: 'r', req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime: performance.now() - started }, 'request completed');

  http
    .createServer((req, res) => {
      const started = performance.now();
      try {
        const path = admit(req, res);
        if (path === undefined) return;
        if (mode === 'get') {
          const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
          let large = false;
          try {
            const st = fstatSync(fd);
            large = st.size > LARGE;
            res.writeHead(200, {
              'content-type': 'application/octet-stream',
              'content-length': String(st.size),
              etag: `"${st.ino.toString(36)}-${st.mtimeMs.toString(36)}-${st.size.toString(36)}"`,
              'last-modified': st.mtime.toUTCString(),
              'accept-ranges': 'bytes',
              'cache-control': 'private, no-cache',
              'x-content-type-options': 'nosniff',
              'content-security-policy': "default-src 'none'; sandbox",
              'x-frame-options': 'DENY',
              'referrer-policy': 'no-referrer',
            });
            if (large) {
              // As File Cloud: a read error after the headers can only cut the connection.
              sendLarge(fd, st.size, res).then(() => logLine(req, 200, started), () => res.destroy());
              return;
            }
            const body = Buffer.allocUnsafe(st.size);
            readSync(fd, body, 0, st.size, 0);
            res.end(body);
          } finally {
            if (!large) closeSync(fd);
          }
          logLine(req, 200, started);
          return;
        }
        if (Number(req.headers['content-length']) > LARGE) {
          receiveLarge(req, res, path).then(
            (status) => logLine(req, status, started),
            () => fail(res, 500, 'internal'),
          );
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          void (async () => {
            const name = join(staging, randomBytes(12).toString('hex'));
            const h = await open(name, 'wx');
            try {
              await h.writev(chunks);
              await h.sync();
            } finally {
              await h.close();
            }
            let status = 201;
            await link(name, path).catch((e: NodeJS.ErrnoException) => {
              if (e.code !== 'EEXIST') throw e;
              status = 409;
            });
            await unlink(name);
            // The one user the token map holds; the path as the index keeps it, below the user root.
            const id = status === 201 && index ? await index('admin', path.slice(userRoot('admin').length + 1), chunks.reduce((n, c) => n + c.length, 0)) : undefined;
            if (status === 201) res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' }).end(id === undefined ? '{"files_written":["x"]}' : `{"files_written":["x"],"id":"${id}"}`);
            else fail(res, 409, 'already_exists');
            logLine(req, status, started);
          })().catch(() => fail(res, 500, 'internal'));
        });
      } catch {
        fail(res, 500, 'internal');
      }
    })
    .listen(Number(a.port), '127.0.0.1');
  if (mode === 'put') void mkdir(staging, { recursive: true });
}
