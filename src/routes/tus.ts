import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { AccessRule } from '../domain/access.js';
import type { Principal } from '../domain/principal.js';
import { parseByteCount, parseDeferLength, parseOverwrite, parseUploadChecksum, parseUploadMetadata, CHECKSUM_ALGORITHMS, type Parsed } from '../http/tus-headers.js';
import type { TusService } from '../services/tus.js';
import type { TusUpload } from '../store/types.js';

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

const hasBody = (request: FastifyRequest) => request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

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
    scope.options(url, open, options);
    scope.post(url, user, create);
    scope.route({ method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], url, exposeHeadRoute: false, ...open, handler: notAllowed(COLLECTION_METHODS) });
  }
  scope.options('/tus/:id', open, options);
  scope.head('/tus/:id', owner, head);
  scope.patch('/tus/:id', owner, patch);
  scope.delete('/tus/:id', owner, terminate);
  scope.route({ method: ['GET', 'PUT', 'POST'], url: '/tus/:id', exposeHeadRoute: false, ...open, handler: notAllowed(UPLOAD_METHODS) });
}
