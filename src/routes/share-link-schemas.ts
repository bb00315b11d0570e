import { bytes, empty, errors, fileAnswers, FilesWritten, header, html, json, jsonBody, Listing, type JsonSchema, type ResponseSpec, type RouteSchema } from '../http/schemas.js';

// The OpenAPI schemas of share links (documentation: src/http/schemas.ts).

const TAG = ['Share links'];
/** Visitors need no account; a password link needs its cookie. */
const visitorSecurity: RouteSchema['security'] = [{}, { shareCookie: [] }];
const sharePath = (what: string): JsonSchema => ({ type: 'object', properties: { '*': { type: 'string', description: what } } });
const apiPath = sharePath('`<id>/[<sub/path>]`: the share id, then a path inside a shared folder.');
const pagePath = sharePath('`<id>/[<sub/path>]` (a page), or `<id>/auth` for the password form.');
const dead = 'Unknown, expired, revoked or used-up link, deleted target, or nothing at the sub-path: one body for every cause (`not_found`).';
const visitorErrors = {
  400: 'A bad sub-path (`invalid_path`).',
  401: 'A password link without its cookie (`password_required`).',
  404: dead,
  429: 'Too many requests from this address (`rate_limited`, with `Retry-After`).',
};
const flagQuery: JsonSchema = {
  type: 'object',
  properties: {
    download: { type: 'string', enum: ['1', 'true'], description: 'A file as an attachment.' },
    zip: { type: 'string', enum: ['1', 'true'], description: 'A folder as a zip (counts as one download).' },
    name: { type: 'array', items: { type: 'string' }, description: 'With `zip`: only these entries.' },
  },
};
const readAnswers: Record<string, ResponseSpec> = {
  ...fileAnswers,
  200: {
    description: 'A folder listing (storage format), a file\'s bytes, or a folder zip. A file\'s first byte (200, or 206 from 0) or a zip counts one download.',
    content: { 'application/json': { schema: Listing }, 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } }, '*/*': { schema: { type: 'string' } } },
    headers: fileAnswers[200].headers,
  },
  ...errors({ ...visitorErrors, 416: 'The range is outside the file.' }),
};
const pageErrors = (when: Record<number, string>): Record<string, ResponseSpec> => {
  const out: Record<string, ResponseSpec> = {};
  for (const [status, description] of Object.entries(when)) out[status] = html(`${description} (an HTML page).`);
  return out;
};

export const SHARE_SCHEMAS = {
  read: {
    summary: 'A shared file\'s bytes or a shared folder\'s listing (machine API)',
    description: 'Range, ETag and 304 as for storage. An upload-only link reads nothing.',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    querystring: flagQuery,
    response: readAnswers,
  },
  head: {
    summary: 'The headers of a shared file or folder listing (machine API)',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    querystring: flagQuery,
    response: readAnswers,
  },
  upload: {
    summary: 'Upload files through an upload-only link',
    description: 'As a multipart PUT to storage, but never replaces: a taken name gets a collision suffix. The answer names the files as sent.',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    body: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    response: {
      201: json('Written.', FilesWritten),
      ...errors({
        ...visitorErrors,
        400: 'A bad sub-path or file name, or no file part (`invalid_path`, `invalid_name`, `bad_request`).',
        403: 'The link is not upload-only (`forbidden`).',
        413: 'Over --max-upload-size (`too_large`).',
        415: 'Not multipart/form-data (`unsupported_media_type`).',
        507: 'No space left, or over the owner\'s quota.',
      }),
    },
  },
  auth: {
    summary: 'Unlock a password link: POST /share/<id>/auth',
    description: 'Throttled like the login. Only `<id>/auth` takes POST; any other path under /share/ answers 405.',
    tags: TAG,
    security: [],
    params: apiPath,
    body: jsonBody({ type: 'object', required: ['password'], properties: { password: { type: 'string' } } }),
    response: {
      204: empty('Right password: an HttpOnly cookie valid for this share (for /share/<id> and /s/<id>).', { 'set-cookie': header('`fc_share=…; Path=<base>/share/<id>; HttpOnly; SameSite=Lax` (and for /s/<id>).') }),
      ...errors({
        400: 'No `password` string in a JSON body (`bad_request`, `invalid_json`).',
        401: 'A wrong password (`invalid_credentials`).',
        404: dead,
        405: 'POST to another path than `<id>/auth` (`method_not_allowed`, with `Allow: GET, HEAD, PUT`).',
        413: 'The body is over 64 KiB.',
        429: 'Too many password attempts from this address (`rate_limited`, with `Retry-After`).',
      }),
    },
  },
  asset: {
    summary: 'A style sheet, script or icon of the share pages',
    tags: TAG,
    security: [],
    params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    response: { 200: bytes('The asset.', ['text/css', 'text/javascript', 'image/svg+xml']), 304: empty('Not modified (`If-None-Match`).'), ...pageErrors({ 400: 'Malformed request', 404: 'No such asset', 429: 'Too many requests' }) },
  },
  page: {
    summary: 'The share page for people without an account: /s/<id>/…',
    description: 'A file: name, size, download and preview; a folder: browsable a page of 200 entries at a time (`?page=N`, next and previous links), with per-file downloads and "download all"; an upload-only link: a drop zone; a password link: the password form. Works without JavaScript.',
    tags: TAG,
    security: visitorSecurity,
    params: pagePath,
    querystring: {
      type: 'object',
      properties: {
        uploaded: { type: 'integer', minimum: 1, description: 'After an upload: how many files arrived.' },
        page: { type: 'integer', minimum: 1, description: 'A folder\'s page (200 entries each; past the last, the last).' },
      },
    },
    response: { 200: html('The page.'), ...pageErrors({ 400: 'A bad sub-path, or a malformed request', 401: 'The password form', 404: 'The one dead-link page, or nothing at the sub-path', 429: 'Too many requests' }) },
  },
  pageAuth: {
    summary: 'The password form of a share page',
    description: 'A form field `password` sets the share cookie and sends the visitor on to the page.',
    tags: TAG,
    security: [],
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The share id.' } } },
    body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['password'], properties: { password: { type: 'string' } } } } } },
    response: {
      303: empty('Unlocked: to the share page.', { location: header('The share page.') }),
      ...pageErrors({ 400: 'Malformed request', 401: 'The password form again (wrong password)', 404: 'The one dead-link page', 413: 'The form is too large', 429: 'Too many requests or password attempts' }),
    },
  },
  pagePost: {
    summary: 'The no-JavaScript upload form of a share page',
    description: "A multipart post to an upload-only link's page uploads files.",
    tags: TAG,
    security: visitorSecurity,
    params: pagePath,
    body: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    response: {
      303: empty('Uploaded: to the page with `?uploaded=<n>`.', { location: header('The page to show next.') }),
      ...pageErrors({
        400: 'The upload page with what was wrong with the upload',
        401: 'The password form',
        403: 'The link is not upload-only',
        404: 'The one dead-link page',
        413: 'The upload page: over the size limit',
        429: 'Too many requests',
      }),
    },
  },
} satisfies Record<string, RouteSchema>;
