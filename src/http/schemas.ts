/**
 * Shared pieces of the route schemas: the contract's error body, the storage
 * listing, token sets, share objects, and helpers that build Fastify `schema`
 * objects in the shape src/http/openapi.ts turns into the OpenAPI document.
 *
 * The schemas are documentation: buildApp installs a validator that accepts
 * everything and a serializer that is plain JSON.stringify (see
 * src/app/route-table.ts), so the handlers' own checks keep choosing every
 * status code and message, and no response field is ever dropped. What keeps
 * the schemas honest is the test suite (test/routes/openapi.test.ts), which
 * checks every registered route has one, and validates the answers of the
 * route tests against them.
 *
 * A route declares, at least:
 *   schema: {
 *     summary: 'One line', tags: ['Tag'],
 *     params / querystring / headers / body (JSON Schema; body may be { content: { 'type': { schema } } }),
 *     response: { 200: json('…', Thing), ...errors({ 400: '…', 401: '…' }) },
 *   }
 * Schemas used by several routes belong here and in COMPONENTS, so the
 * document names them once (#/components/schemas/<Name>).
 */

export type JsonSchema = { readonly [key: string]: unknown };

export type MediaTypes = { readonly [mediaType: string]: { readonly schema: JsonSchema; readonly example?: unknown } };

/** One documented answer: a description, its body by media type (none: no body), its headers. */
export type ResponseSpec = {
  readonly description: string;
  readonly content?: MediaTypes;
  readonly headers?: { readonly [name: string]: { readonly description?: string; readonly schema: JsonSchema } };
};

/**
 * The `schema` of a route, in @fastify/swagger's conventions: Fastify's own
 * keys (params, querystring, headers, body, response) plus summary,
 * description, tags, security, operationId and hide for the document.
 */
export type RouteSchema = {
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly operationId?: string;
  /** OpenAPI security requirements; absent: derived from the route's `config.auth` (none = public). */
  readonly security?: readonly { readonly [scheme: string]: readonly string[] }[];
  /** Left out of the document (only the base path's own redirect; the completeness test lists them). */
  readonly hide?: boolean;
  readonly params?: JsonSchema;
  readonly querystring?: JsonSchema;
  readonly headers?: JsonSchema;
  readonly body?: JsonSchema | { readonly content: MediaTypes; readonly description?: string; readonly required?: boolean };
  readonly response: { readonly [status: string]: ResponseSpec };
};

export const ErrorBody: JsonSchema = {
  type: 'object',
  description: 'The body of every 4xx and 5xx answer to a request other than HEAD.',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', pattern: '^[a-z][a-z_]*$', description: 'Stable snake_case code (docs/api.md, "Errors").', examples: ['not_found'] },
    message: { type: 'string', description: 'One readable sentence for people; not for programs to parse.' },
  },
};

export const Entry: JsonSchema = {
  type: 'object',
  required: ['is_file', 'name', 'size', 'modified'],
  properties: {
    is_file: { type: 'boolean' },
    name: { type: 'string' },
    size: { type: 'integer', minimum: 0, description: "Bytes of a file; a folder's size is the backend's own figure." },
    modified: { type: 'string', format: 'date-time' },
    id: { type: ['string', 'null'], description: 'Own and granted folders\' listings: the item\'s stable id, kept by moves, renames and overwrites (null while not indexed). docs/api.md "Sync fields".' },
    sha256: { type: ['string', 'null'], description: 'A file\'s SHA-256 (hex), null until known.' },
    etag: { type: ['string', 'null'], description: 'A file\'s ETag, as GET gives it and If-Match takes it (null until indexed).' },
  },
};

export const Listing: JsonSchema = {
  type: 'object',
  description: 'A folder: folders first, then files, each group by name in code-point order.',
  required: ['entries'],
  properties: { entries: { type: 'array', items: Entry } },
};

export const FilesWritten: JsonSchema = {
  type: 'object',
  required: ['files_written'],
  properties: {
    files_written: { type: 'array', items: { type: 'string' }, description: 'The final names, collision suffixes included.' },
    files: {
      type: 'array',
      description: '`PUT /storage/…`: the files written, in order (docs/api.md "Sync fields"); a share link\'s drop box tells only the names.',
      items: {
        type: 'object',
        required: ['name', 'path', 'size', 'etag', 'id', 'sha256'],
        properties: {
          name: { type: 'string' },
          path: { type: 'string', description: '`/<owner>/<path>`.' },
          size: { type: 'integer', minimum: 0 },
          etag: { type: 'string', description: 'The new file\'s ETag: send it as If-Match on the next write.' },
          id: { type: ['string', 'null'], description: 'Its stable id (kept across overwrites, moves, renames).' },
          sha256: { type: ['string', 'null'], description: 'SHA-256 (hex) of the bytes written.' },
        },
      },
    },
  },
};

export const TokenSet: JsonSchema = {
  type: 'object',
  required: ['access_token', 'refresh_token', 'valid_for_seconds'],
  properties: {
    access_token: { type: 'string', description: 'Send as `Authorization: Bearer <token>`.' },
    refresh_token: { type: 'string', description: 'Never changes; its inactivity expiry slides forward on each refresh.' },
    valid_for_seconds: { type: 'integer', minimum: 1, description: "The access token's lifetime (--access-token-ttl)." },
  },
};

export const Share: JsonSchema = {
  type: 'object',
  required: ['id', 'url', 'path', 'is_file', 'expires_at', 'has_password', 'max_downloads', 'downloads', 'upload_only', 'created_at'],
  properties: {
    id: { type: 'string', description: 'Random (at least 128 bits); reveals neither user nor path.' },
    url: { type: 'string', description: '`<base path>/s/<id>`: the page for people without an account.' },
    path: { type: 'string', description: '`/<user>/<path>` of the shared file or folder.' },
    is_file: { type: 'boolean' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    has_password: { type: 'boolean' },
    max_downloads: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
    downloads: {
      type: 'number',
      minimum: 0,
      description: 'Downloads so far, with a fraction (six decimals): every answer that sent bytes of a file, a zip or a thumbnail added bytes sent ÷ that file’s or zip’s size.',
    },
    upload_only: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
  },
};

/** Schemas the document names once under #/components/schemas (matched by identity). Add yours here. */
export const COMPONENTS: { readonly [name: string]: JsonSchema } = { Error: ErrorBody, Entry, Listing, FilesWritten, TokenSet, Share };

/**
 * Answers any route may give, whatever it declares: the document adds them to
 * every operation that does not list the status itself, and the answer check
 * accepts them. 400: hooks that run before any handler (an HTTP/1.1 request
 * without Host, two Authorization headers, a URL that cannot be decoded);
 * 500: a bug, logged with the request id.
 */
export const ANY_ROUTE: { readonly [status: string]: ResponseSpec } = {
  400: {
    description: 'Malformed request: no Host header (HTTP/1.1), two Authorization headers, or a URL that cannot be decoded (`bad_request`, `invalid_path`).',
    content: { 'application/json': { schema: ErrorBody } },
  },
  500: { description: 'A bug: the cause is logged with the request id, never sent (`internal`).', content: { 'application/json': { schema: ErrorBody } } },
};

/** A JSON answer. */
export function json(description: string, schema: JsonSchema, headers?: ResponseSpec['headers']): ResponseSpec {
  return { description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) };
}

/** An answer without a body (204, 201 without body, 304, a HEAD). */
export function empty(description: string, headers?: ResponseSpec['headers']): ResponseSpec {
  return { description, ...(headers ? { headers } : {}) };
}

/** An answer whose body is bytes of the given media type(s). */
export function bytes(description: string, mediaTypes: readonly string[] = ['application/octet-stream'], headers?: ResponseSpec['headers']): ResponseSpec {
  const content: Record<string, { schema: JsonSchema }> = {};
  for (const m of mediaTypes) content[m] = { schema: { type: 'string', contentMediaType: m } };
  return { description, content, ...(headers ? { headers } : {}) };
}

/** An HTML page. */
export const html = (description: string, headers?: ResponseSpec['headers']): ResponseSpec => bytes(description, ['text/html'], headers);

/** The contract's error answers, `{ status: 'when' }` → `{ status: ResponseSpec }` with the shared error body. */
export function errors(when: { readonly [status: number]: string }): { [status: string]: ResponseSpec } {
  const out: { [status: string]: ResponseSpec } = {};
  for (const [status, description] of Object.entries(when)) out[status] = json(description, ErrorBody);
  return out;
}

/** A response header, for ResponseSpec.headers. */
export const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });

/** A JSON request body. */
export function jsonBody(schema: JsonSchema, description?: string): RouteSchema['body'] {
  return { required: true, ...(description ? { description } : {}), content: { 'application/json': { schema } } };
}

/** The wildcard of a route such as `/storage/*` (Fastify's param `*`; the document calls it `path`). */
export const wildcard = (description: string): JsonSchema => ({
  type: 'object',
  required: ['*'],
  properties: { '*': { type: 'string', description } },
});

/** The file-serving answers shared by /storage/, /share/ and /dav/ (Range, ETag, 304). */
export const fileHeaders = {
  etag: header('Strong validator of this version of the file.'),
  'last-modified': header('HTTP date of the last change.'),
  'accept-ranges': header('Always `bytes`.'),
  'content-length': header('Bytes in this answer.', { type: 'integer' }),
  'repr-digest': header('`sha-256=:<base64>:` (RFC 9530): the SHA-256 of the whole file, when the server knows it.'),
} as const;

export const fileAnswers = {
  200: bytes('The file: its bytes, with `Content-Type` from the extension (default application/octet-stream).', ['*/*'], fileHeaders),
  206: bytes('One range of the file (a single `Range: bytes=…`).', ['*/*'], { ...fileHeaders, 'content-range': header('`bytes <first>-<last>/<size>`.') }),
  304: empty('Not modified (`If-None-Match` / `If-Modified-Since` matched).'),
} as const;
