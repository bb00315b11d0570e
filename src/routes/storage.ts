import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { writerOf } from '../domain/principal.js';
import { isRoot, keyChild, parseDecodedStoragePath, parseStoragePath, type ParsedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Entry } from '../storage/backend.js';
import { sentDigest, writePreconditions, writtenFiles } from './sync-fields.js';
import { rawStoragePath } from '../http/url.js';
import { STORAGE_READ, type AccessRule, type Resource } from '../domain/access.js';
import { STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import { uploadParts } from './upload-parts.js';
import type { FilesService } from '../services/files.js';
import type { PathTokenService } from '../services/path-token-service.js';
import { objectBody, optionalBoolean, optionalInteger, requiredString } from './body.js';
import { readJsonBody } from './json-body.js';
import { fileHeaders, isPlainGet, sendWhole, serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import type { ZipService } from '../services/zip.js';
import { sendFolderZip, zipNames } from './zip-reply.js';
import { empty, errors, fileAnswers, FilesWritten, header, json, Listing, wildcard, type JsonSchema, type RouteSchema } from '../http/schemas.js';
import type { ThumbnailService } from '../services/thumbnails.js';
import type { GrantService } from '../services/grants.js';
import type { VersionService } from '../services/versions.js';
import { parseThumbnailSize } from '../thumbnails/sizes.js';
import { sendThumbnail } from './thumbnail-reply.js';

const JSON_LIMIT = 64 * 1024;

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
const readSchema: RouteSchema = {
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
const headSchema: RouteSchema = { ...readSchema, summary: 'The headers of a folder listing, a file or a folder zip' };

const putSchema: RouteSchema = {
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
const postSchema: RouteSchema = {
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

const deleteSchema: RouteSchema = {
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

/**
 * /storage/<user>/<...path>: seed §4.3–4.7, CONTRACT "Storage paths" to
 * "Path tokens". Handlers parse the path, check ownership, call one files
 * service method, and set the HTTP headers.
 */
export async function storageRoutes(
  scope: FastifyInstance,
  deps: { files: FilesService; pathTokens: PathTokenService; zips: ZipService; basePath?: string; thumbnails: ThumbnailService; grants: Pick<GrantService, 'assertMay'>; versions: VersionService },
): Promise<void> {
  const { files } = deps;

  // PUT bodies are users' bytes and must stream untouched whatever their type
  // (a raw upload of a .json file is not JSON to parse); only POST is parsed.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (request, payload, done) => {
    if (request.method !== 'POST') return done(null, undefined);
    readJsonBody(payload, JSON_LIMIT).then((v) => done(null, v), (e: Error) => done(e));
  });

  // Every storage answer, errors included: an uploaded HTML or SVG file must never run script in our origin.
  scope.addHook('onSend', async (_request, reply) => {
    reply.headers(STORAGE_ANSWER_HEADERS);
  });

  // What the URL names: the access check compares its owner with the caller's and a path token's path with it.
  const resource = (request: FastifyRequest): Resource => {
    const raw = rawStoragePath(request.url, deps.basePath);
    if (raw === undefined) throw new AppError('not_found', 'Nothing exists at this address.');
    return { kind: 'storage', ...parseStoragePath(raw) };
  };
  const target = (request: FastifyRequest): ParsedStoragePath => request.resource as ParsedStoragePath & Resource;

  // Plain GETs and HEADs of files are mostly answered before Fastify, under this same rule (src/app/fast-read.ts).
  const read = { config: { access: STORAGE_READ, resource }, exposeHeadRoute: false };
  const write = { config: { access: { who: 'user' } as AccessRule, resource } };
  // MakePathToken only reads, so a read-only grant reaches the handler, and the actions that write ask again.
  const actions = { config: { access: { who: 'user', readingAction: true } as AccessRule, resource } };

  scope.get('/storage/*', { ...read, schema: readSchema }, async (request, reply) => serve(request, reply, target(request), true));
  scope.head('/storage/*', { ...read, schema: headSchema }, async (request, reply) => serve(request, reply, target(request), false));

  async function serve(request: FastifyRequest, reply: FastifyReply, { key, trailingSlash }: ParsedStoragePath, withBody: boolean) {
    const query = request.query as Record<string, unknown>;
    const download = query.download === '1' || query.download === 'true';
    // Handed on by the fast read path after it asked the store: its answer stands (a folder, or the error).
    const learned = request.learnedBefore;
    if (learned && 'error' in learned) throw learned.error;
    const folder = learned && 'folder' in learned ? learned : undefined;
    // A plain GET of a file (the common case) opens it at once; a folder goes on to its listing.
    if (query.versions !== undefined || query.version !== undefined) {
      if (!(await files.stat(key)).isFile || trailingSlash) throw new AppError('is_a_directory', 'Only a file has versions.');
      if (query.version === undefined) return reply.header('cache-control', 'no-store').send({ versions: await deps.versions.list(key) });
      const opened = await deps.versions.read(key, String(query.version));
      // A version never changes, but its ETag is the bytes' own: a cache must not mix it up with the file's.
      reply.header('cache-control', 'no-store');
      if (withBody) return sendWhole(reply, opened, download);
      opened.stream.destroy();
      fileHeaders(reply, opened.entry, download);
      return reply.header('content-length', String(opened.entry.size)).code(200).send();
    }
    if (!folder && isPlainGet(request) && !trailingSlash && query.thumbnail === undefined && query.zip === undefined) {
      const whole = await files.readIfFile(key);
      if (whole) return sendWhole(reply, whole, download);
    }
    const entry = folder?.folder ?? (await files.stat(key));
    const thumbnail = parseThumbnailSize(query.thumbnail);
    if (thumbnail !== undefined) return sendThumbnail(request, reply, deps.thumbnails, key, entry, thumbnail, withBody);
    if (query.zip === '1' || query.zip === 'true') {
      if (entry.isFile) throw new AppError('not_a_directory', 'Only a folder can be downloaded as a zip.');
      return sendFolderZip(request, reply, deps.zips, { folder: key, names: zipNames(query.name) });
    }
    if (!entry.isFile) {
      return sendListing(reply, files, key, withBody, { sync: true });
    }
    // A trailing slash addresses a folder; there is none here.
    if (trailingSlash) throw new AppError('not_found', 'No folder exists at this path.');
    return serveFile(request, reply, files, key, entry, { download, withBody });
  }

  scope.put('/storage/*', { ...write, schema: putSchema }, async (request, reply) => {
    const { key, trailingSlash } = target(request);
    const query = request.query as Record<string, unknown>;
    const overwrite = query.overwrite === 'true' || query.overwrite === '1';
    const contentType = request.headers['content-type'] ?? '';
    let written: { key: StorageKey; entry: Entry }[];
    if (/^multipart\/form-data\b/i.test(contentType)) {
      const entries = await files.writeParts(key, uploadParts(request, files.maxUploadBytes), { overwrite, writer: writerOf(request.principal) });
      written = entries.map((entry) => ({ key: keyChild(key, entry.name), entry }));
    } else {
      if (trailingSlash || isRoot(key)) {
        const existing = await files.stat(key).catch(() => undefined);
        if (existing && !existing.isFile) throw new AppError('is_a_directory', 'A folder is at this path; send multipart/form-data to upload into it.');
        throw new AppError('invalid_path', 'A file path cannot end with "/".');
      }
      const declared = Number(request.headers['content-length']);
      if (files.maxUploadBytes !== undefined && declared > files.maxUploadBytes) {
        throw new AppError('too_large', `The upload is larger than this server accepts (${files.maxUploadBytes} bytes).`);
      }
      // The declared length lets an object store size its upload parts for the file.
      const entry = await files.writeFile(key, request.raw, {
        sizeHint: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
        ...writePreconditions(request),
        sha256: sentDigest(request.headers),
        writer: writerOf(request.principal),
      });
      // The new version's validator, so an editor can send it as If-Match on its next save.
      reply.header('etag', entry.etag);
      written = [{ key, entry }];
    }
    return reply.code(201).send({ files_written: written.map((w) => w.entry.name), files: await writtenFiles(files, written) });
  });

  scope.delete('/storage/*', { ...write, schema: deleteSchema }, async (request, reply) => {
    await files.delete(target(request).key, writePreconditions(request));
    return reply.code(204).send();
  });
  scope.post('/storage/*', { ...actions, schema: postSchema }, async (request, reply) => {
    const { key } = target(request);
    const body = objectBody(request.body);
    const action = body.action;
    if (action === undefined) throw new AppError('unknown_action', 'The field "action" is required: MakePathToken, CreateFolder, Move or Copy.');
    switch (action) {
      case 'MakePathToken': {
        await files.stat(key);
        // Through a grant, the token names its maker: it works only while the grant still reaches the path.
        const { token, expiresAt } = await deps.pathTokens.make(key, optionalInteger(body, 'valid_for_seconds'), request.grant ? request.principal!.username : undefined);
        reply.header('x-expires-at', new Date(expiresAt * 1000).toISOString()).header('cache-control', 'no-store');
        return { token };
      }
      case 'CreateFolder':
        if (key.user !== request.principal!.username) await deps.grants.assertMay(request.principal!, key, 'POST');
        await files.createFolder(key);
        return reply.code(201).send();
      case 'Move':
      case 'Copy': {
        const newPath = requiredString(body, 'new_path').replace(/^\//, '');
        const dest = parseDecodedStoragePath(newPath.includes('/') ? newPath : `${newPath}/`).key;
        // A key in another user's tree must lie inside a writable shared folder: both of a Move; a Copy's
        // destination (its source is only read, which the route's own check of the URL allowed).
        const principal = request.principal!;
        for (const k of action === 'Move' ? [key, dest] : [dest]) if (k.user !== principal.username) await deps.grants.assertMay(principal, k, 'MOVE');
        const overwrite = optionalBoolean(body, 'overwrite') ?? false;
        if (action === 'Copy') await files.copy(key, dest, overwrite, writerOf(principal));
        else await (dest.user === key.user ? files.move(key, dest, overwrite, writePreconditions(request)) : files.moveAcross(key, dest, overwrite, writerOf(principal), writePreconditions(request)));
        return reply.code(204).send();
      }
      case 'restore_version': {
        if (key.user !== request.principal!.username) await deps.grants.assertMay(request.principal!, key, 'PUT');
        const opened = await deps.versions.read(key, requiredString(body, 'version'));
        // Written as any replace is: what the file holds now is kept as a version in turn.
        await files.writeFile(key, opened.stream, { sizeHint: opened.entry.size, writer: writerOf(request.principal) });
        return reply.code(204).send();
      }
      default:
        throw new AppError('unknown_action', `Unknown action ${JSON.stringify(action).slice(0, 60)}: use MakePathToken, CreateFolder, Move or Copy.`);
    }
  });
}
