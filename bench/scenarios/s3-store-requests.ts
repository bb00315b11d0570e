/**
 * Store requests per operation (issue 53), counted by the proxy File Cloud's
 * store traffic goes through (lib/store-proxy.ts): each operation is done a
 * few times, one at a time, on names of its own, and the requests that passed
 * are divided by the count. The set-up of each (its folder, the files a GET or
 * a move needs) is done before the count starts.
 */
import { randomBytes } from 'node:crypto';
import { BenchError, USER } from '../lib/paths.js';
import type { Server } from '../lib/server.js';
import type { StoreProxy } from '../lib/store-proxy.js';
import { apiMkdir, FILE_SIZE, PER_MULTIPART } from './small-uploads.js';

export type RequestCount = { readonly id: string; readonly label: string; readonly perOperation: number; readonly by: Readonly<Record<string, number>> };

const EACH = 10;

async function send(s: Server, method: string, path: string, init: { headers?: Record<string, string>; body?: Buffer | FormData | string } = {}): Promise<Response> {
  const res = await fetch(`${s.base}${path}`, { method, headers: { ...s.headers, ...init.headers }, body: init.body });
  if (res.status >= 300) throw new BenchError(`${s.name}: ${method} ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  await res.arrayBuffer();
  return res;
}

/** Counts the store requests of each operation; `api` and `dav` are File Cloud's two doors, `proxy` the one its store traffic passes. */
export async function countStoreRequests(api: Server, dav: Server, proxy: StoreProxy): Promise<RequestCount[]> {
  const payload = randomBytes(FILE_SIZE);
  const run = `count-${randomBytes(4).toString('hex')}`;
  for (const f of ['raw', 'multi', 'dav', 'tus', 'move']) await apiMkdir(api)(`${run}/${f}`);
  const counts: RequestCount[] = [];
  /** `op` done `times` times; the requests divided by `per` (the operations that makes). */
  const count = async (id: string, label: string, times: number, op: (i: number) => Promise<unknown>, per = times) => {
    proxy.reset();
    for (let i = 0; i < times; i++) await op(i);
    const by: Record<string, number> = {};
    let all = 0;
    for (const [name, n] of proxy.counts()) {
      by[name] = n / per;
      all += n;
    }
    counts.push({ id, label, perOperation: all / per, by });
  };

  await count('raw_put', 'API raw PUT of a new 4 KiB file', EACH, (i) => send(api, 'PUT', api.path(`${run}/raw/${i}.bin`), { body: payload }));
  await count(
    'multipart_part',
    `API multipart PUT, per part (${PER_MULTIPART} new 4 KiB files a request)`,
    1,
    () => {
      const form = new FormData();
      for (let n = 0; n < PER_MULTIPART; n++) form.append('file', new Blob([payload]), `${n}.bin`);
      return send(api, 'PUT', api.path(`${run}/multi/`), { body: form });
    },
    PER_MULTIPART,
  );
  await count('dav_put', 'WebDAV PUT of a new 4 KiB file', EACH, (i) => send(dav, 'PUT', dav.path(`${run}/dav/${i}.bin`), { body: payload }));
  const meta = (i: number) => `filename ${Buffer.from(`${i}.bin`).toString('base64')},folder ${Buffer.from(`/${USER}/${run}/tus`).toString('base64')}`;
  await count('tus', 'tus upload of 4 KiB (creation, one PATCH that finishes it)', EACH, async (i) => {
    const created = await send(api, 'POST', '/tus/', { headers: { 'tus-resumable': '1.0.0', 'upload-length': String(FILE_SIZE), 'upload-metadata': meta(i) } });
    const location = new URL(created.headers.get('location') ?? '', `${api.base}/`).pathname;
    await send(api, 'PATCH', location, { headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: payload });
  });
  await count('get', 'GET of a 4 KiB file', EACH, (i) => send(api, 'GET', api.path(`${run}/raw/${i}.bin`)));
  await count('listing', `listing of a folder of ${EACH} files`, 5, () => send(api, 'GET', api.path(`${run}/raw/`)));
  await count('move', 'Move of a file into another folder', EACH, (i) =>
    send(api, 'POST', api.path(`${run}/raw/${i}.bin`), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'Move', new_path: `/${USER}/${run}/move/${i}.bin` }) }),
  );
  return counts;
}

/** `| operation | store requests | of which |` */
export function requestTable(counts: readonly RequestCount[]): string {
  const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
  const lines = ['| operation | store requests | of which |', '|---|---:|---|'];
  for (const c of counts) lines.push(`| ${c.label} | ${fmt(c.perOperation)} | ${Object.entries(c.by).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')} |`);
  return lines.join('\n');
}
