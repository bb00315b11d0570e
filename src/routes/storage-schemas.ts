import { empty, errors, fileAnswers, FilesWritten, header, json, Listing, wildcard, type JsonSchema, type RouteSchema } from '../http/schemas.js';

/** The OpenAPI descriptions of /storage/ (src/routes/storage.ts). */

const storagePath = wildcard('`<user>/<...path>`, each segment percent-encoded; `<user>/` is the root. A folder may be addressed with or without one trailing slash.');
const flag = (description: string): JsonSchema => ({ type: 'string', enum: ['1', 'true'], description });
const pathErrors = {
  400: 'A bad path: a `.`, `..` or empty segment, NUL, a backslash, invalid percent-encoding (`invalid_path`).',
  401: 'No valid token, a path token for another path or method, or a path that is not yours (`unauthorized`).',
};
const Versions: JsonSchema = {
  type: 'object',
  required: ['versions'],
  properties: {
    versions: {
      type: 'array',
      items: { type: 'object', required: ['id', 'size', 'modified'], properties: { id: { type: 'string' }, size: { type: 'integer' }, modified: { type: 'string', format: 'date-time', description: 'When this content was replaced.' } } },
    },
  },
};
const readQuery: JsonSchema = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'A path token for exactly this path, instead of an access token.' },
    download: flag('With `1`/`true`: `Content-Disposition: attachment` with the file name (RFC 6266/5987).'),
    zip: flag('With `1`/`true` on a folder: the folder as a zip (stored, streamed, resumable with Range).'),
    name: { type: 'array', items: { type: 'string' }, description: 'With `zip`: only these entries of the folder (repeatable).' },
    versions: { type: 'string', description: 'On a file, with --versions: its earlier contents, `{"versions":[{"id","size","modified"}]}`, newest first.' },
    version: { type: 'string', description: 'On a file, with --versions: the bytes of that version (an id from `?versions`).' },
  },
};
const readAnswers = {
  ...fileAnswers,
  200: {
    description: 'A folder: its listing (`application/json`). A file: its bytes with `Content-Type` from the extension. With `?zip=1`: the folder as `application/zip`. With `?versions` on a file: its versions (`application/json`); with `?version=<id>`: that version\'s bytes.',
    content: { 'application/json': { schema: { anyOf: [Listing, Versions] } }, 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } }, '*/*': { schema: { type: 'string' } } },
    headers: fileAnswers[200].headers,
  },
};
export const readSchema: RouteSchema = {
  summary: 'List a folder, download a file, or a folder as a zip',
  description: 'Every storage answer carries `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox`. Files support a single `Range` (206; If-Range), `If-None-Match` / `If-Modified-Since` (304).',
  tags: ['Storage'],
  params: storagePath,
  querystring: readQuery,
  headers: {
    type: 'object',
    properties: {
      range: { type: 'string', description: 'One byte range, `bytes=<first>-[<last>]` or `bytes=-<suffix>`.' },
      'if-range': { type: 'string' },
      'if-none-match': { type: 'string' },
      'if-modified-since': { type: 'string' },
    },
  },
  response: {
    ...readAnswers,
    ...errors({
      ...pathErrors,
      404: 'Nothing at this path, a trailing slash on a file, or `/storage/<user>` without its slash (`not_found`).',
      409: '`?zip=1` on a file (`not_a_directory`).',
      416: 'The range is outside the file (`range_not_satisfiable`, with `Content-Range: bytes */<size>`).',
      502: 'The object store answered with an error (`storage_failed`).',
      503: 'The object store cannot be reached (`storage_unavailable`).',
    }),
  },
};
export const headSchema: RouteSchema = { ...readSchema, summary: 'The headers of a folder listing, a file or a folder zip' };

export const putSchema: RouteSchema = {
  summary: 'Upload: a file\'s bytes, or multipart files into a folder',
  description:
    '`multipart/form-data` to a folder path: every part with a filename is one file in that folder (created with its parents); a taken name gets `name (1).ext` unless `?overwrite=true`. Any other content type to a file path: the body is the file, created or atomically replaced, parents created. Bytes stream to staging and are renamed into place when complete; a failed upload leaves nothing.',
  tags: ['Storage'],
  params: storagePath,
  querystring: { type: 'object', properties: { overwrite: { type: 'string', enum: ['true', '1'], description: 'Multipart: replace files of the same name instead of suffixing.' } } },
  headers: {
    type: 'object',
    properties: {
      'if-match': { type: 'string', description: 'Write only if the file\'s current ETag is one of these (or `*`: only if it exists); else 412.' },
      'if-none-match': { type: 'string', description: '`*`: write only if nothing is at the name (checked as the file takes it); a list of ETags: only if the file has none of them. Else 412.' },
      'repr-digest': { type: 'string', description: '`sha-256=:<base64>:` (RFC 9530; `Content-Digest` is taken the same): the file is written only if its bytes have that SHA-256, else 400 `digest_mismatch`.' },
      'file-cloud-origin': { type: 'string', description: 'The writer\'s name for itself (1 to 64 token characters), copied into the change entries of this request.' },
    },
  },
  body: {
    required: true,
    description: 'The file\'s bytes (any content type but multipart), or multipart/form-data with one file per part.',
    content: {
      'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
    },
  },
  response: {
    201: json('Written: the final names.', FilesWritten),
    ...errors({
      ...pathErrors,
      400: 'A bad path or file name (`invalid_path`, `invalid_name`), a raw upload to a path ending in `/`, a multipart body without a file part or malformed, a malformed digest or File-Cloud-Origin (`bad_request`); bytes that do not have the SHA-256 the digest header names (`digest_mismatch`, nothing written).',
      409: 'A folder where the file should go, or a file where a folder is needed (`is_a_directory`, `not_a_directory`).',
      412: '`If-Match` does not name the file\'s current ETag, or the file is gone; `If-None-Match` matches (`*`: a file is there) (`precondition_failed`); nothing is written.',
      413: 'Over --max-upload-size (`too_large`).',
      502: 'The object store answered with an error (`storage_failed`).',
      503: 'The object store cannot be reached (`storage_unavailable`).',
      507: 'No space left (`disk_full`) or over the quota (`quota_exceeded`); nothing is left behind.',
    }),
  },
};

const actionBody: JsonSchema = {
  type: 'object',
  required: ['action'],
  oneOf: [
    {
      title: 'MakePathToken',
      properties: {
        action: { const: 'MakePathToken' },
        valid_for_seconds: { type: 'integer', minimum: 1, description: 'At most --path-token-ttl (the default).' },
      },
    },
    { title: 'CreateFolder', properties: { action: { const: 'CreateFolder' } } },
    {
      title: 'restore_version',
      required: ['version'],
      properties: { action: { const: 'restore_version' }, version: { type: 'string', description: 'An id from `?versions` (with --versions): the file gets that content back; what it held becomes a version itself.' } },
    },
    {
      title: 'Move',
      required: ['new_path'],
      properties: {
        action: { const: 'Move' },
        new_path: { type: 'string', description: '`/<user>/<...path>` (no /storage prefix; the leading slash optional), within your own tree.' },
        overwrite: { type: 'boolean', description: 'Replace an existing destination.' },
      },
    },
    {
      title: 'Copy',
      required: ['new_path'],
      properties: {
        action: { const: 'Copy' },
        new_path: { type: 'string', description: '`/<user>/<...path>` as for Move: in your own tree, or inside a folder shared with you for editing.' },
        overwrite: { type: 'boolean', description: 'Replace an existing destination.' },
      },
    },
  ],
};
export const postSchema: RouteSchema = {
  summary: 'Actions on a path: MakePathToken, CreateFolder, Move, Copy, restore_version',
  tags: ['Storage'],
  params: storagePath,
  body: { required: true, content: { 'application/json': { schema: actionBody } } },
  response: {
    200: json('MakePathToken: the path token (exactly that one field).', { type: 'object', required: ['token'], properties: { token: { type: 'string' } } }, {
      'x-expires-at': header('When the path token expires (RFC 3339).'),
    }),
    201: empty('CreateFolder: the folder was created (with its parents).'),
    204: empty('Move: moved. Copy: copied. restore_version: the file has that version\'s content again.'),
    ...errors({
      ...pathErrors,
      400: 'Not JSON (`invalid_json`), a missing or unknown action (`unknown_action`), a bad field or path (`bad_request`, `invalid_path`), a folder moved or copied into itself (`into_itself`).',
      401: 'No valid access token, a path that is not yours, or a Move or Copy destination under another user (`unauthorized`).',
      404: 'The path (MakePathToken, Move or Copy source) does not exist, or no such version / versions off (`not_found`).',
      409: 'CreateFolder: something exists at the path; Move, Copy: the destination exists without `overwrite` (`already_exists`), or a file is where a folder is needed.',
      412: 'Move: `If-Match` / `If-None-Match` do not hold for the item moved (`precondition_failed`); nothing moves.',
      413: 'The JSON body is over 64 KiB.',
      507: 'Copy: the copy does not fit the destination owner\'s quota (`quota_exceeded`) or the disk (`disk_full`); nothing of it is kept.',
    }),
  },
};

export const deleteSchema: RouteSchema = {
  summary: 'Delete a file, or a folder with everything in it',
  tags: ['Storage'],
  params: storagePath,
  response: {
    204: empty('Deleted.'),
    ...errors({
      ...pathErrors,
      400: 'A bad path, or the root itself (`invalid_path`).',
      404: 'Nothing at this path (`not_found`).',
      412: '`If-Match` / `If-None-Match` do not hold for the item (a file\'s ETag, a folder\'s tree ETag) (`precondition_failed`); nothing is deleted.',
    }),
  },
};
