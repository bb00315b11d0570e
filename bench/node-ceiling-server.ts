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
 *                one pino line;
 *   --mode put   a durable upload: the same token check and walk of the
 *                folder, the body staged in a new file (one writev), fsync,
 *                close, link(2) to its name (created or 409), unlink of the
 *                staging name, 201 with a JSON body, one pino line. No
 *                metadata: no usage, search index or change journal.
 *
 * `node dist/bench/node-ceiling-server.js --mode get|put --port P --root DIR
 *  --workers N --token T --db FILE --log FILE`; URLs are `/storage/<user>/<path>`
 * with the files under `<root>/<user>/<path>`.
 */
import Database from 'better-sqlite3';
import cluster from 'node:cluster';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';

const { values: a } = parseArgs({ options: { mode: { type: 'string' }, port: { type: 'string' }, root: { type: 'string' }, workers: { type: 'string' }, token: { type: 'string' }, db: { type: 'string' }, log: { type: 'string' } } });
const mode = a.mode === 'put' ? 'put' : 'get';
const workers = Math.max(1, Number(a.workers ?? 1));
const root = a.root ?? '.';

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
  const logLine = (req: IncomingMessage, status: number, started: number) => log.info({ reqId: 'r', req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime: performance.now() - started }, 'request completed');

  http
    .createServer((req, res) => {
      const started = performance.now();
      try {
        const path = admit(req, res);
        if (path === undefined) return;
        if (mode === 'get') {
          const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
          try {
            const st = fstatSync(fd);
            const body = Buffer.allocUnsafe(st.size);
            readSync(fd, body, 0, st.size, 0);
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
            res.end(body);
          } finally {
            closeSync(fd);
          }
          logLine(req, 200, started);
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
            if (status === 201) res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' }).end('{"files_written":["x"]}');
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
