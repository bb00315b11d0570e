import { bytes, empty, fileAnswers, header, html, type ResponseSpec, type RouteSchema } from '../http/schemas.js';

// The OpenAPI schemas of /basic/ (documentation: src/http/schemas.ts).

const TAG = ['Basic HTML version'];
const session: RouteSchema['security'] = [{ basicSession: [] }];
const toLogin = (also = ''): ResponseSpec => empty(`Not signed in: to the sign-in page${also}.`, { location: header('`<base>/basic/login[?next=…]`.') });
/** Errors of the basic pages are HTML pages, not JSON. */
const errorPages = (when: Record<number, string>): Record<string, ResponseSpec> => {
  const out: Record<string, ResponseSpec> = {};
  for (const [status, description] of Object.entries(when)) out[status] = html(`${description} (an HTML error page).`);
  return out;
};
const form = (properties: Record<string, unknown>, required: string[] = []) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties } } },
});
const subPath = {
  type: 'object',
  properties: { '*': { type: 'string', description: '`<folder path>/` (a folder page, always with a trailing slash) or `file/<file path>` (a download).' } },
} as const;

export const BASIC_SCHEMAS = {
  slashless: {
    summary: 'The basic HTML version: a redirect to /basic/',
    tags: TAG,
    response: { 308: empty('To `<base>/basic/`.'), ...errorPages({ 400: 'Malformed request' }) },
  },
  style: {
    summary: 'The style sheet of the basic pages',
    tags: TAG,
    response: { 200: bytes('CSS.', ['text/css']), ...errorPages({ 400: 'Malformed request' }) },
  },
  icon: {
    summary: 'The icon of the basic pages',
    tags: TAG,
    response: { 200: bytes('SVG.', ['image/svg+xml']), ...errorPages({ 400: 'Malformed request' }) },
  },
  loginPage: {
    summary: 'The sign-in page of the basic HTML version',
    tags: TAG,
    querystring: { type: 'object', properties: { next: { type: 'string', description: 'A page of /basic/ to return to after signing in.' } } },
    response: { 200: html('The sign-in form.'), 303: empty('Already signed in: to `next` or the root folder.'), ...errorPages({ 400: 'Malformed request' }) },
  },
  login: {
    summary: 'Sign in (form post): sets the session cookie',
    description: 'Counted by the same throttle as /auth/login. Same-origin forms only.',
    tags: TAG,
    body: form({ username: { type: 'string' }, password: { type: 'string' }, next: { type: 'string' } }, ['username', 'password']),
    response: {
      303: empty('Signed in: to `next` or the root folder, with `Set-Cookie: fc_basic=…`.', { 'set-cookie': header('The session cookie (HttpOnly, SameSite=Lax, Path=<base>/basic/).') }),
      ...errorPages({
        400: 'A missing username or password: the sign-in page again',
        401: 'A wrong username or password: the sign-in page again',
        403: 'A post from another site',
        413: 'The form is over 64 KiB',
        415: 'Not a form',
        429: 'Too many sign-in attempts from this address (with `Retry-After`)',
      }),
    },
  },
  logout: {
    summary: 'Sign out (form post with the CSRF token)',
    tags: TAG,
    security: session,
    body: form({ csrf: { type: 'string' } }, ['csrf']),
    response: { 303: empty('Signed out: to the sign-in page, the session ended.'), ...errorPages({ 400: 'Malformed request', 403: 'No valid CSRF token, or a post from another site', 413: 'The form is over 64 KiB', 415: 'Not a form' }) },
  },
  page: {
    summary: 'A folder page, a confirmation page, or a file download',
    description: 'Folder pages are paged (500 entries each); `?rename=<name>` and `?delete=<name>` show the confirmation forms. File downloads carry `Content-Disposition: attachment` and the storage sandbox CSP.',
    tags: TAG,
    security: session,
    params: subPath,
    querystring: {
      type: 'object',
      properties: {
        page: { type: 'integer', minimum: 1 },
        rename: { type: 'string', description: 'Show the rename form for this entry.' },
        delete: { type: 'string', description: 'Show the delete confirmation for this entry.' },
      },
    },
    response: {
      200: { description: 'A folder or confirmation page (HTML), or a file\'s bytes.', content: { 'text/html': { schema: { type: 'string' } }, '*/*': { schema: { type: 'string' } } } },
      206: fileAnswers[206],
      302: empty('A folder address without its slash, a file at a folder address or the reverse: to the right address.'),
      303: toLogin(', with `next` set to this page'),
      304: fileAnswers[304],
      ...errorPages({ 400: 'A bad path or name', 404: 'Nothing at this path', 416: 'The range is outside the file' }),
    },
  },
  change: {
    summary: 'Change a folder: upload, create a folder, rename, delete (form posts with the CSRF token)',
    description: 'Answered with 303 to the folder page, which shows what happened. Uploads are multipart (`?action=upload`), the rest urlencoded with `action` = mkdir | rename | delete.',
    tags: TAG,
    security: session,
    params: subPath,
    querystring: { type: 'object', properties: { action: { type: 'string', const: 'upload' }, csrf: { type: 'string', description: 'The CSRF token, for multipart uploads.' } } },
    body: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['csrf', 'action'],
            properties: { csrf: { type: 'string' }, action: { type: 'string', enum: ['mkdir', 'rename', 'delete'] }, name: { type: 'string' }, new_name: { type: 'string' } },
          },
        },
        'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
    },
    response: {
      303: empty('Done (or not signed in): to the folder page, with a one-time message.'),
      ...errorPages({
        400: 'A bad name, an unknown action, or a post to an address that is no folder',
        403: 'No valid CSRF token, or a post from another site',
        404: 'Nothing at this path',
        409: 'The name is taken, or the address is a file',
        413: 'Over the upload or form limit',
        415: 'Neither a form nor multipart',
        507: 'No space left, or over the quota',
      }),
    },
  },
} satisfies Record<string, RouteSchema>;
