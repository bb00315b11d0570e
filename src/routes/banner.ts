import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { bytes, empty, errors, type RouteSchema } from '../http/schemas.js';

const bannerText = bytes('The banner, plain text (never HTML), up to 16 KiB; read afresh on each request.', ['text/plain']);
// No banner is the usual case, not an error: a 404 would put a failed request in every page load's console.
const noBanner = empty('No banner is set (the file is absent or blank): no body.');
const loginBannerSchema: RouteSchema = {
  summary: 'The sign-in page banner',
  description: 'Public: shown on the sign-in page. The text of `data/banner/login.txt`.',
  tags: ['Meta'],
  // An unreadable file is no banner (204): only a bug answers an error here.
  response: { 200: bannerText, 204: noBanner, ...errors({ 500: 'A bug: the cause is logged with the request id, never sent (`internal`).' }) },
};
const pageBannerSchema: RouteSchema = {
  summary: 'The banner shown on every page to signed-in users',
  description: 'The text of `data/banner/page.txt`.',
  tags: ['Meta'],
  response: { 200: bannerText, 204: noBanner, ...errors({ 401: 'No valid access token (`unauthorized`).' }) },
};

/** Longest banner served; a banner is a line or a paragraph, not a document. */
export const BANNER_MAX_BYTES = 16 * 1024;

/**
 * Reads a banner file afresh: operators edit `data/banner/*.txt` and the next
 * request sees the change, no restart. Absent, empty or unreadable → undefined.
 */
export async function readBanner(dir: string, name: 'login' | 'page'): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(join(dir, `${name}.txt`), 'r');
    const st = await fh.stat();
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, BANNER_MAX_BYTES));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8').replace(/\uFFFD+$/, '');
    return text.trim() === '' ? undefined : text;
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

/**
 * `GET <base>/banner/login` (public, shown on the sign-in page) and
 * `GET <base>/banner/page` (signed-in users, shown on every page). Plain text:
 * the web UI renders it as text, never as HTML.
 */
export function bannerRoutes(app: FastifyInstance, deps: { dir: string }): void {
  const send = async (reply: FastifyReply, name: 'login' | 'page') => {
    const text = await readBanner(deps.dir, name);
    if (text === undefined) return reply.header('cache-control', 'no-cache').code(204).send();
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(text);
  };
  app.get('/banner/login', { config: { access: { who: 'public' } }, schema: loginBannerSchema }, async (_request, reply) => send(reply, 'login'));
  app.get('/banner/page', { config: { access: { who: 'user' } }, schema: pageBannerSchema }, async (_request, reply) => send(reply, 'page'));
}
