import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { contentTypeFor } from '../lib/mime.js';
import { newNonce, NONCE_SLOT, withNonce } from '../http/security-headers.js';
import { isApiPath, isUiPage, rawPath } from '../http/url.js';
import { bytes, errors, html, type RouteSchema } from '../http/schemas.js';

const assetSchema: RouteSchema = {
  summary: 'A file of the built web UI',
  description: 'Hashed names, cached for a year (`immutable`).',
  tags: ['Web UI'],
  params: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' } } },
  response: { 200: bytes('The asset (JavaScript, CSS, fonts, images).', ['*/*']), ...errors({ 404: 'No such asset (`not_found`).' }) },
};

const shellSchema: RouteSchema = {
  summary: 'The web UI',
  description: "Every page path answers with the app shell (the app routes in the browser); a path that is none of the app's pages answers the shell with 404, and the app shows its not-found view. Paths under the API prefixes (/auth/, /api/, /storage/, /share/, /tus/, /dav/, /banner/, /metrics, /is_file_cloud) are never the UI: they answer 404 JSON, or 405 with `Allow` for a known path.",
  tags: ['Web UI'],
  params: { type: 'object', properties: { '*': { type: 'string', description: 'The page path.' } } },
  response: {
    200: html('The app shell.'),
    // Two bodies for one status: the shell for a page path, the error JSON under an API prefix.
    404: {
      description: "The app shell for an unknown page (the app shows its not-found view); under an API prefix, the contract's 404 JSON (`not_found`).",
      content: { ...html('').content, ...errors({ 404: '' })['404']?.content },
    },
  },
};

const escapeAttr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The built shell adapted to where it is served: Vite builds with relative
 * asset URLs (`./assets/…`), which would break on deep page paths, so they
 * become `<base>/assets/…`; and the client learns the base path and the
 * public URL from two meta tags (no <base href>: the CSP keeps base-uri 'none').
 */
export function adaptShell(html: string, opts: { basePath: string; publicUrl: string }): string {
  const meta = `<meta name="file-cloud-base" content="${escapeAttr(opts.basePath)}" />` + (opts.publicUrl ? `<meta name="file-cloud-public-url" content="${escapeAttr(opts.publicUrl)}" />` : '');
  return html
    .replace(/(["'(])\.?\/assets\//g, `$1${opts.basePath}/assets/`)
    // The <noscript> link to the basic HTML version (/basic/), under the base path too.
    .replace(/href="\/basic\/"/g, `href="${escapeAttr(opts.basePath)}/basic/"`)
    // Our own scripts and style sheets (the built file's, never a user's) carry the answer's nonce.
    .replace(/<script\b/g, `<script nonce="${NONCE_SLOT}"`)
    .replace(/<link\b(?=[^>]*\brel="(?:stylesheet|modulepreload)")/g, `<link nonce="${NONCE_SLOT}"`)
    .replace('</head>', `${meta}</head>`);
}

/**
 * Content-Security-Policy of the app shell: only the scripts and style
 * sheets the shell names with this answer's nonce, and what those scripts
 * load themselves ('strict-dynamic': Vite's chunks); 'self' is not a script
 * or style source, so no file of our origin (a user's .js or .css under
 * /storage/, /share/, /dav/) can ever be one. Style attributes stay allowed
 * (they cannot load a style sheet). Never framed.
 */
export function uiCsp(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'`,
    `style-src 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "frame-src 'self'",
    "worker-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The web UI: `dist/web/index.html` for `/` and every other page path (the
 * app routes in the browser), hashed files under /assets/ cached for a year.
 * The shell itself is never cached, so a new version is picked up at once.
 */
export async function uiRoutes(app: FastifyInstance, deps: { webRoot: string | undefined; basePath?: string; publicUrl?: string }): Promise<void> {
  const basePath = deps.basePath ?? '';
  const indexFile = deps.webRoot ? join(deps.webRoot, 'index.html') : undefined;
  // The shell is ours and small (a few hundred bytes); read once, not per request.
  const built = indexFile ? await readFile(indexFile, 'utf8').catch(() => undefined) : undefined;
  const shell = built === undefined ? undefined : adaptShell(built, { basePath, publicUrl: deps.publicUrl ?? '' });

  app.get('/assets/:name', { config: { access: { who: 'public' } }, schema: assetSchema }, async (request, reply) => {
    const { name } = request.params as { name: string };
    if (!deps.webRoot || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new AppError('not_found', 'No such asset.');
    const file = join(deps.webRoot, 'assets', name);
    const st = await stat(file).catch(() => undefined);
    if (!st?.isFile()) throw new AppError('not_found', 'No such asset.');
    reply.header('content-type', contentTypeFor(name)).header('content-length', String(st.size));
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    return reply.send(createReadStream(file));
  });

  app.get('/*', { config: { access: { who: 'public' } }, schema: shellSchema }, async (request, reply) => {
    const path = rawPath(request.url).slice(basePath.length);
    // Under the API prefixes: the not-found handler's 404 JSON, or 405 with Allow for a known path.
    if (isApiPath(path)) return reply.callNotFound();
    // Any other page path than the app's own: the shell with 404, and the app shows its not-found view.
    if (!isUiPage(path)) reply.code(404);
    const nonce = newNonce();
    reply.header('content-security-policy', uiCsp(nonce)).header('x-frame-options', 'DENY').header('cache-control', 'no-cache');
    reply.type('text/html; charset=utf-8');
    if (shell) return reply.send(withNonce(shell, nonce));
    return reply.send('<!doctype html><meta charset="utf-8"><title>File Cloud</title><p>The web UI is not built. Run <code>npm run build</code>; the API works meanwhile.</p>');
  });
}
