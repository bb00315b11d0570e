/** One HTTP request from Node (transfers: a 1 GiB body is one request, which wrk cannot time). */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import http from 'node:http';
import { BenchError, MiB } from './paths.js';
import type { Server } from './server.js';

/** `body` is the answer's text when `kept`; an answer over the kept size is only counted (`body` ''). */
export type HttpResult = { status: number; bytes: number; body: string; kept: boolean };

/** What a result keeps of a body by default: a listing or a small file, not a 1 GiB download. */
const KEEP_BYTES = 16 * MiB;

/**
 * One request; the response body is counted (and kept up to `keepBytes`).
 * `body` is a small body sent as it is; `upload` streams a file as the body, optionally wrapped in multipart framing.
 */
export function request(server: Server, method: string, path: string, opts: { headers?: Record<string, string>; body?: string; upload?: { file: string; size: number; multipart?: { filename: string } }; timeoutMs?: number; keepBytes?: number } = {}): Promise<HttpResult> {
  return new Promise((res, rej) => {
    const headers: Record<string, string> = { ...server.headers, ...opts.headers };
    let pre = Buffer.alloc(0);
    let post = Buffer.alloc(0);
    if (opts.upload) {
      if (opts.upload.multipart) {
        const boundary = `----bench${randomBytes(12).toString('hex')}`;
        pre = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.upload.multipart.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
        post = Buffer.from(`\r\n--${boundary}--\r\n`);
        headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      } else {
        headers['content-type'] = 'application/octet-stream';
      }
      headers['content-length'] = String(pre.length + opts.upload.size + post.length);
    } else if (opts.body !== undefined) {
      headers['content-length'] = String(Buffer.byteLength(opts.body));
    }
    const keepBytes = opts.keepBytes ?? KEEP_BYTES;
    const req = http.request(`${server.base}${path}`, { method, headers, agent: false }, (resp) => {
      let bytes = 0;
      let chunks: Buffer[] = [];
      resp.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes <= keepBytes) chunks.push(c);
        else chunks = [];
      });
      resp.on('end', () => {
        const kept = bytes <= keepBytes;
        res({ status: resp.statusCode ?? 0, bytes, body: kept ? Buffer.concat(chunks).toString('utf8') : '', kept });
      });
      resp.on('error', rej);
    });
    const timer = setTimeout(() => req.destroy(new BenchError(`${method} ${path} on ${server.name} took over ${(opts.timeoutMs ?? 600_000) / 1000} s`)), opts.timeoutMs ?? 600_000);
    req.on('close', () => clearTimeout(timer));
    req.on('error', rej);
    if (!opts.upload) return void req.end(opts.body);
    req.write(pre);
    const src = createReadStream(opts.upload.file, { highWaterMark: 256 * 1024 });
    src.on('error', (e) => req.destroy(e));
    src.on('end', () => req.end(post));
    src.pipe(req, { end: false });
  });
}

export function expectStatus(server: Server, what: string, r: HttpResult, ok: number[]): void {
  if (!ok.includes(r.status)) throw new BenchError(`${server.name}: ${what} answered ${r.status}: ${r.body.slice(0, 300)}`);
}
