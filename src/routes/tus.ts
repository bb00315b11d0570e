import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { AccessRule } from '../domain/access.js';
import type { Principal } from '../domain/principal.js';
import { parseByteCount, parseDeferLength, parseOverwrite, parseUploadChecksum, parseUploadMetadata, CHECKSUM_ALGORITHMS, type Parsed } from '../http/tus-headers.js';
import { declaresBody } from '../http/declared-body.js';
import type { TusService } from '../services/tus.js';
import type { TusUpload } from '../store/tus-uploads.js';
import { empty, errors, header, type JsonSchema, type ResponseSpec, type RouteSchema } from '../http/schemas.js';

const TAG = ['Resumable uploads (tus)'];
const tusResumable = { type: 'string', const: '1.0.0', description: 'Required on every request but OPTIONS; anything else → 412.' } as const;
const idParam: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The upload id, from the creation\'s `Location`.' } } };
const uploadHeaders = {
  'upload-offset': header('Bytes received so far.', { type: 'integer' }),
  'upload-expires': header('When the unfinished upload is dropped (HTTP date).'),
  'file-cloud-path': header('Once complete: `/<user>/<final path>`, each segment percent-encoded.'),
};
const tusErrors = {
  400: 'A bad tus header: Upload-Length, Upload-Offset, Upload-Metadata (`filename` required), Upload-Checksum (`bad_request`).',
  412: '`Tus-Resumable` missing or not `1.0.0` (`precondition_failed`, with `Tus-Version`).',
};
const chunkBody = {
  required: false,
  content: { 'application/offset+octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
};
const optionsSchema: RouteSchema = {
  summary: 'The server\'s tus capabilities',
  description: 'No authentication, no Tus-Resumable needed.',
  tags: TAG,
  response: {
    204: empty('Capabilities.', {
      'tus-version': header('`1.0.0`.'),
      'tus-extension': header(`\`${'creation,creation-with-upload,creation-defer-length,termination,expiration,checksum'}\`.`),
      'tus-checksum-algorithm': header('`sha1`.'),
      'tus-max-size': header('--max-upload-size, when set.', { type: 'integer' }),
    }),
    ...errors({ 400: 'Malformed request.' }),
  },
};
const createSchema: RouteSchema = {
  summary: 'Create an upload (optionally with its first bytes)',
  description: '`Upload-Metadata` keys: `filename` (required), `folder` (`/<user>/<path>`, default your root), `overwrite` (`true` replaces; otherwise a taken name gets a collision suffix). Size limit and quota are checked here.',
  tags: TAG,
  headers: {
    type: 'object',
    required: ['tus-resumable', 'upload-metadata'],
    properties: {
      'tus-resumable': tusResumable,
      'upload-length': { type: 'integer', minimum: 0, description: 'The total size; or send Upload-Defer-Length: 1.' },
      'upload-defer-length': { type: 'string', const: '1' },
      'upload-metadata': { type: 'string', description: 'Comma-separated `key base64(value)` pairs.' },
      'upload-checksum': { type: 'string', description: '`sha1 <base64 digest>` of the bytes sent with the creation.' },
    },
  },
  body: chunkBody,
  response: {
    201: empty('Created.', { location: header('The upload\'s URL, `<base path>/tus/<id>`.'), ...uploadHeaders }),
    ...errors({
      ...tusErrors,
      401: 'No valid access token (`unauthorized`).',
      409: 'The target folder is a file (`not_a_directory`).',
      413: 'Over --max-upload-size (`too_large`).',
      415: 'Bytes sent with the creation that are not `application/offset+octet-stream` (`unsupported_media_type`).',
      429: 'The user already has --max-open-uploads unfinished uploads (`too_many_uploads`); finish or terminate one first.',
      460: 'The bytes do not match Upload-Checksum (`checksum_mismatch`); they were discarded.',
      507: 'No space left, or over the quota (`quota_exceeded`: the upload\'s whole length is held against the quota from its creation).',
    }),
  },
};
const owner = { 404: 'No such upload, not yours, expired, or asked for without a valid token (`not_found`).' };
const headSchema: RouteSchema = {
  summary: 'The offset of an upload',
  tags: TAG,
  params: idParam,
  headers: { type: 'object', required: ['tus-resumable'], properties: { 'tus-resumable': tusResumable } },
  response: {
    200: empty('The upload\'s state.', { ...uploadHeaders, 'upload-length': header('The total size, when known.', { type: 'integer' }), 'upload-defer-length': header('`1` while the size is unknown.'), 'upload-metadata': header('As sent at creation.') }),
    ...errors({ ...tusErrors, ...owner }),
  },
};
const patchSchema: RouteSchema = {
  summary: 'Append bytes to an upload',
  description: 'When the last byte arrives the file appears atomically in its folder; the answer then carries `File-Cloud-Path`. A request that began with a valid token finishes even if the token expires meanwhile.',
  tags: TAG,
  params: idParam,
  headers: {
    type: 'object',
    required: ['tus-resumable', 'upload-offset'],
    properties: {
      'tus-resumable': tusResumable,
      'upload-offset': { type: 'integer', minimum: 0, description: 'Must equal the upload\'s offset.' },
      'upload-length': { type: 'integer', minimum: 0, description: 'Once, for a deferred length.' },
      'upload-checksum': { type: 'string', description: '`sha1 <base64 digest>` of this chunk.' },
    },
  },
  body: { ...chunkBody, required: true },
  response: {
    204: empty('Appended.', uploadHeaders),
    ...errors({
      ...tusErrors,
      ...owner,
      409: 'Upload-Offset is not the upload\'s offset (`offset_mismatch`), or another request is writing it (`upload_busy`).',
      413: 'More bytes than the upload\'s length or --max-upload-size (`too_large`).',
      415: 'The chunk is not `application/offset+octet-stream` (`unsupported_media_type`).',
      460: 'The chunk does not match Upload-Checksum (`checksum_mismatch`); it was discarded.',
      507: 'No space left, or over the quota.',
    }),
  },
};
const deleteSchema: RouteSchema = {
  summary: 'Terminate an upload',
  tags: TAG,
  params: idParam,
  headers: { type: 'object', required: ['tus-resumable'], properties: { 'tus-resumable': tusResumable } },
  response: { 204: empty('Terminated: its bytes are gone.'), ...errors({ ...tusErrors, ...owner, 409: 'Another request is writing the upload right now (`upload_busy`).' }) },
};
const notAllowedAnswer = (allow: string): { [status: string]: ResponseSpec } => ({
  405: { ...errors({ 405: `Not a tus method here (\`method_not_allowed\`, with \`Allow: ${allow}\`).` })['405']!, headers: { allow: header(allow) } },
});
const notAllowedSchema = (allow: string, params?: JsonSchema): RouteSchema => ({
  summary: `Not supported here: 405 with Allow: ${allow}`,
  tags: TAG,
  ...(params ? { params } : {}),
  response: { ...errors(tusErrors), ...notAllowedAnswer(allow) },
});

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,creation-defer-length,termination,expiration,checksum';
const OFFSET_TYPE = 'application/offset+octet-stream';
const COLLECTION_METHODS = 'POST, OPTIONS';
const UPLOAD_METHODS = 'HEAD, PATCH, DELETE, OPTIONS';

/** Response headers a browser client on another origin must be able to read (see cors.ts). */
export const TUS_EXPOSED_HEADERS = 'Location, Upload-Offset, Upload-Length, Upload-Metadata, Upload-Defer-Length, Upload-Expires, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm, File-Cloud-Path';
export const TUS_REQUEST_HEADERS = 'Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Defer-Length, Upload-Checksum';

const value = <T>(p: Parsed<T>): T => {
  if (!p.ok) throw new AppError('bad_request', `${p.reason}.`);
  return p.value;
};

const hasBody = (request: FastifyRequest) => declaresBody(request.headers);

/** The body's Content-Length when it is a plain byte count (not chunked). */
const declared = (request: FastifyRequest): number | undefined => {
  const n = Number(request.headers['content-length']);
  return request.headers['transfer-encoding'] === undefined && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
};

/** `/<user>/<path>` with each segment percent-encoded: header values must be ASCII, names are Unicode. */
export const encodeFinalPath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

/**
 * /tus/: tus 1.0.0 resumable uploads (CONTRACT "Resumable uploads (tus 1.0)").
 * POST /tus/ creates (optionally with the first chunk), HEAD /tus/<id> tells
 * the offset, PATCH appends, DELETE terminates, OPTIONS tells the server's
 * capabilities. Handlers check the protocol headers and call the tus service.
 */
export async function tusRoutes(scope: FastifyInstance, deps: { tus: TusService; basePath: string }): Promise<void> {
  const { tus, basePath } = deps;

  // Chunks are users' bytes and stream untouched into staging.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  scope.addHook('onSend', async (request, reply) => {
    reply.header('tus-resumable', TUS_VERSION);
    // A chunk refused before it was read (409, 404, 412, …) may be a whole file: rather than have
    // Node read and discard it to keep the connection, close it; the client resumes on a new one.
    if (!request.raw.complete && hasBody(request)) reply.header('connection', 'close');
  });
  scope.addHook('onRequest', async (request) => {
    // tus §Tus-Resumable: every request but OPTIONS names the version it speaks; anything else → 412.
    if (request.method === 'OPTIONS') return;
    if (request.headers['tus-resumable'] !== TUS_VERSION) {
      throw new AppError('precondition_failed', `Send Tus-Resumable: ${TUS_VERSION}, the only tus version this server speaks.`, { headers: { 'tus-version': TUS_VERSION } });
    }
  });

  const user = { config: { access: { who: 'user' } as AccessRule } };
  // An upload's URL is private: without the owner's valid token it does not exist (404, not 401).
  const owner = { config: { access: { who: 'user', hide: true } as AccessRule } };
  const open = { config: { access: { who: 'public' } as AccessRule } };
  const principal = (request: FastifyRequest) => request.principal as Principal;
  const uploadId = (request: FastifyRequest) => (request.params as { id: string }).id;

  const options = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('tus-version', TUS_VERSION).header('tus-extension', TUS_EXTENSIONS).header('tus-checksum-algorithm', CHECKSUM_ALGORITHMS.join(','));
    if (tus.maxUploadBytes !== undefined) reply.header('tus-max-size', String(tus.maxUploadBytes));
    return reply.code(204).send();
  };

  /** The headers every answer about an upload carries. */
  const describe = (reply: FastifyReply, u: TusUpload) => {
    reply.header('upload-offset', String(u.offset)).header('upload-expires', new Date(u.expiresAt).toUTCString()).header('cache-control', 'no-store');
    if (u.finalPath) reply.header('file-cloud-path', encodeFinalPath(u.finalPath));
  };

  const chunkType = (request: FastifyRequest): string => (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const h = request.headers;
    const deferred = value(parseDeferLength(h['upload-defer-length'] as string | undefined));
    const lengthHeader = h['upload-length'] as string | undefined;
    if (deferred && lengthHeader !== undefined) throw new AppError('bad_request', 'Send either Upload-Length or Upload-Defer-Length: 1, not both.');
    const length = deferred ? undefined : value(parseByteCount(lengthHeader, 'Upload-Length'));
    const rawMetadata = (h['upload-metadata'] as string | undefined) ?? '';
    const metadata = value(parseUploadMetadata(rawMetadata));
    const overwrite = value(parseOverwrite(metadata.get('overwrite')));
    const withData = hasBody(request);
    if (withData && chunkType(request) !== OFFSET_TYPE) throw new AppError('unsupported_media_type', `Data sent with the creation request must be ${OFFSET_TYPE}.`);
    const sha1 = withData ? value(parseUploadChecksum(h['upload-checksum'] as string | undefined))?.digest : undefined;
    let u = await tus.create(principal(request), { length, rawMetadata, metadata, overwrite });
    reply.header('location', `${basePath}/tus/${u.id}`);
    if (withData) u = await tus.append(principal(request), u.id, request.raw, { offset: 0, sha1, declaredBytes: declared(request) });
    describe(reply, u);
    return reply.code(201).send();
  };

  const head = async (request: FastifyRequest, reply: FastifyReply) => {
    const u = await tus.get(request.principal, uploadId(request));
    describe(reply, u);
    if (u.length === undefined) reply.header('upload-defer-length', '1');
    else reply.header('upload-length', String(u.length));
    if (u.metadata !== '') reply.header('upload-metadata', u.metadata);
    return reply.code(200).send();
  };

  const patch = async (request: FastifyRequest, reply: FastifyReply) => {
    const h = request.headers;
    if (chunkType(request) !== OFFSET_TYPE) throw new AppError('unsupported_media_type', `A PATCH body must be ${OFFSET_TYPE}.`);
    const offset = value(parseByteCount(h['upload-offset'] as string | undefined, 'Upload-Offset'));
    const length = h['upload-length'] === undefined ? undefined : value(parseByteCount(h['upload-length'] as string, 'Upload-Length'));
    const sha1 = value(parseUploadChecksum(h['upload-checksum'] as string | undefined))?.digest;
    const u = await tus.append(request.principal, uploadId(request), request.raw, { offset, length, sha1, declaredBytes: declared(request) });
    describe(reply, u);
    return reply.code(204).send();
  };

  const terminate = async (request: FastifyRequest, reply: FastifyReply) => {
    await tus.terminate(request.principal, uploadId(request));
    return reply.code(204).send();
  };

  const notAllowed = (allow: string) => async (request: FastifyRequest) => {
    throw new AppError('method_not_allowed', `${request.method} does not apply here; allowed: ${allow}.`, { headers: { allow } });
  };

  for (const url of ['/tus', '/tus/']) {
    scope.options(url, { ...open, schema: optionsSchema }, options);
    scope.post(url, { ...user, schema: createSchema }, create);
    scope.route({ method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], url, exposeHeadRoute: false, ...open, schema: notAllowedSchema(COLLECTION_METHODS), handler: notAllowed(COLLECTION_METHODS) });
  }
  scope.options('/tus/:id', { ...open, schema: { ...optionsSchema, params: idParam } }, options);
  scope.head('/tus/:id', { ...owner, schema: headSchema }, head);
  scope.patch('/tus/:id', { ...owner, schema: patchSchema }, patch);
  scope.delete('/tus/:id', { ...owner, schema: deleteSchema }, terminate);
  scope.route({ method: ['GET', 'PUT', 'POST'], url: '/tus/:id', exposeHeadRoute: false, ...open, schema: notAllowedSchema(UPLOAD_METHODS, idParam), handler: notAllowed(UPLOAD_METHODS) });
}
