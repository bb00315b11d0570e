/**
 * The "S3 ceiling" (issue 53): a bare `node:http` server that does the least File Cloud's contract
 * asks of a small upload on S3 + PostgreSQL and nothing else, so the s3smallput rows can say how far
 * File Cloud's own code is from what Node, the AWS SDK and PostgreSQL allow on this machine, beside
 * the SDK's direct PutObjects. Per `PUT /storage/<user>/<path>` (a small body, taken whole):
 *
 *   - the Bearer token's SHA-256 looked up in a Map;
 *   - the name looked up in the index (CONTRACT "Backends and nodes": on S3 the index is the
 *     authority on names for what File Cloud writes), one SELECT;
 *   - one conditional PutObject (`If-None-Match: *`: a name another tool took meanwhile is never
 *     overwritten; 412 answers 409);
 *   - the entry written to the index with the answer's ETag and a date, one INSERT (its own commit);
 *   - 201 with a JSON body.
 *
 * No usage, change journal, search text, leases, events or audit. Always one process: File Cloud's
 * default on a small box such as this 2-core one (the scenario does not follow a `--workers` given
 * to File Cloud with `--fc-arg`).
 *
 * `node dist/bench/s3-ceiling-server.js --port P --token T --bucket B --prefix P --endpoint URL
 *  --region R --database URL` (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment).
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import http, { Agent, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { radosgwCompatible } from '../src/storage/s3/client.js';

const { values: a } = parseArgs({ options: { port: { type: 'string' }, token: { type: 'string' }, bucket: { type: 'string' }, prefix: { type: 'string' }, endpoint: { type: 'string' }, region: { type: 'string' }, database: { type: 'string' } } });
const bucket = a.bucket ?? '';
const prefix = a.prefix ?? 'ceiling';
const sha = (t: string) => createHash('sha256').update(t).digest('hex');
const tokens = new Map([[sha(a.token ?? ''), 'admin']]);
const s3 = new S3Client({
  endpoint: a.endpoint,
  region: a.region,
  ...radosgwCompatible(),
  // Keep-alive sockets, as File Cloud's client and the bench's direct side have.
  requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) },
});
// As many connections as uploads come at once (the bench's 8).
const db = new pg.Pool({ connectionString: a.database, max: 8 });
await db.query('create table if not exists ceiling_entries (user_name text not null, path text not null, size bigint not null, etag text not null, modified bigint not null, primary key (user_name, path))');

const fail = (res: ServerResponse, status: number, code: string) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { code, message: code } }));
};

http
  .createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    const user = auth.startsWith('Bearer ') ? tokens.get(sha(auth.slice(7))) : undefined;
    if (!user) return fail(res, 401, 'unauthorized');
    const url = req.url ?? '';
    if (req.method !== 'PUT' || !url.startsWith(`/storage/${user}/`)) return fail(res, 404, 'not_found');
    const path = decodeURIComponent(url.slice(`/storage/${user}/`.length));
    if (path === '' || path.split('/').some((s) => s === '' || s === '.' || s === '..')) return fail(res, 400, 'invalid_path');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const taken = await db.query('select 1 from ceiling_entries where user_name = $1 and path = $2', [user, path]);
        if (taken.rowCount) return fail(res, 409, 'already_exists');
        let put;
        try {
          put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${user}/${path}`, Body: body, ContentLength: body.length, IfNoneMatch: '*' }));
        } catch (e) {
          if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412) return fail(res, 409, 'already_exists');
          throw e;
        }
        // File Cloud dates the entry from the answer's Date header; the clock here costs no less.
        await db.query('insert into ceiling_entries (user_name, path, size, etag, modified) values ($1, $2, $3, $4, $5)', [user, path, body.length, put.ETag ?? '', Date.now()]);
        res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ files_written: [path], etag: put.ETag }));
      })().catch(() => fail(res, 500, 'internal'));
    });
  })
  .listen(Number(a.port), '127.0.0.1');
