import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../domain/errors.js';

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
    if (text === undefined) throw new AppError('not_found', 'No banner is set.');
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(text);
  };
  app.get('/banner/login', { config: { access: { who: 'public' } } }, async (_request, reply) => send(reply, 'login'));
  app.get('/banner/page', { config: { access: { who: 'user' } } }, async (_request, reply) => send(reply, 'page'));
}
