import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isRoot, keyChild, parseDecodedStoragePath, parseStoragePath, type ParsedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Entry } from '../storage/backend.js';
import { sentDigest, writePreconditions, writtenAnswer } from './sync-fields.js';
import { collectingWritten } from '../lib/written-identities.js';
import { rawStoragePath } from '../http/url.js';
import { STORAGE_READ, STORAGE_WRITE, type AccessRule, type Resource } from '../domain/access.js';
import { fileMayAnswer, firstStep, type ReadAddress } from '../domain/read-address.js';
import { STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import { uploadParts } from './upload-parts.js';
import type { PathTokenService } from '../services/path-token-service.js';
import { objectBody, optionalBoolean, optionalInteger, requiredString } from './body.js';
import { readJsonBody } from './json-body.js';
import { fileHeaders, isPlainGet, sendWhole, serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import { sendFolderZip, zipNames } from './zip-reply.js';
import { deleteSchema, headSchema, postSchema, putSchema, readSchema } from './storage-schemas.js';
import type { Operations } from '../services/operations.js';
import { parseThumbnailSize } from '../thumbnails/sizes.js';
import { sendThumbnail } from './thumbnail-reply.js';
import { sentence } from '../lib/i18n/sentences.js';

const JSON_LIMIT = 64 * 1024;

/**
 * /storage/<user>/<...path>: seed §4.3–4.7, CONTRACT "Storage paths" to
 * "Path tokens". Handlers parse the path and call one method of the operation layer as the
 * request's principal (which asks `decide` for every key, the body's too), and set the HTTP headers.
 */
export async function storageRoutes(
  scope: FastifyInstance,
  deps: { pathTokens: PathTokenService; basePath?: string; operations: Operations },
): Promise<void> {
  const as = (request: FastifyRequest) => deps.operations.as(request.principal!);

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
  // Plain small raw PUTs are mostly answered before Fastify, under this same rule (src/app/fast-write.ts).
  const write = { config: { access: STORAGE_WRITE, resource } };
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
    const ops = as(request);
    // The fast read path starts the same way (src/domain/read-address.ts).
    const address: ReadAddress = { method: request.method, plain: isPlainGet(request) && query.thumbnail === undefined && query.zip === undefined, trailingSlash, linkItself: false };
    if (query.versions !== undefined || query.version !== undefined) {
      if (!(await ops.stat(key)).isFile || trailingSlash) throw new AppError('is_a_directory', 'Only a file has versions.');
      if (query.version === undefined) return reply.header('cache-control', 'no-store').send({ versions: await ops.versions(key) });
      const opened = await ops.readVersion(key, String(query.version));
      // A version never changes, but its ETag is the bytes' own: a cache must not mix it up with the file's.
      reply.header('cache-control', 'no-store');
      if (withBody) return sendWhole(reply, opened, download);
      opened.stream.destroy();
      fileHeaders(reply, opened.entry, download);
      return reply.header('content-length', String(opened.entry.size)).code(200).send();
    }
    if (!folder && firstStep(address) === 'open') {
      const whole = await ops.readIfFile(key);
      if (whole) return sendWhole(reply, whole, download);
    }
    const entry = folder?.folder ?? (await ops.stat(key));
    const thumbnail = parseThumbnailSize(query.thumbnail);
    if (thumbnail !== undefined) return sendThumbnail(request, reply, ops, key, entry, thumbnail, withBody);
    if (query.zip === '1' || query.zip === 'true') {
      if (entry.isFile) throw new AppError('not_a_directory', 'Only a folder can be downloaded as a zip.');
      return sendFolderZip(request, reply, { plan: (folder, opts) => ops.zip(folder, opts) }, { folder: key, names: zipNames(query.name) });
    }
    if (!entry.isFile) {
      return sendListing(reply, ops, key, withBody, { sync: true });
    }
    if (!fileMayAnswer(address)) throw new AppError('not_found', 'No folder exists at this path.');
    return serveFile(request, reply, ops, key, entry, { download, withBody });
  }

  // The index's identities of what the PUT writes are noted as they are written (sync-fields.ts).
  scope.put('/storage/*', { ...write, schema: putSchema }, (request, reply) => collectingWritten(async () => {
    // Handed on by the fast write path after its write failed: the error is the answer (the body is spent).
    const learned = request.learnedBefore;
    if (learned && 'error' in learned) throw learned.error;
    const { key, trailingSlash } = target(request);
    const query = request.query as Record<string, unknown>;
    const overwrite = query.overwrite === 'true' || query.overwrite === '1';
    const contentType = request.headers['content-type'] ?? '';
    let written: { key: StorageKey; entry: Entry }[];
    if (/^multipart\/form-data\b/i.test(contentType)) {
      const ops = as(request);
      const entries = await ops.writeParts(key, uploadParts(request, ops.maxUploadBytes), { overwrite });
      written = entries.map((entry) => ({ key: keyChild(key, entry.name), entry }));
    } else {
      if (trailingSlash || isRoot(key)) {
        const existing = await as(request).stat(key).catch(() => undefined);
        if (existing && !existing.isFile) throw new AppError('is_a_directory', 'A folder is at this path; send multipart/form-data to upload into it.');
        throw new AppError('invalid_path', sentence('apiDetail.fileEndsSlash'));
      }
      const declared = Number(request.headers['content-length']);
      // One layer object for the request (a small upload's hot path): its limit, then its write.
      const ops = as(request);
      if (ops.maxUploadBytes !== undefined && declared > ops.maxUploadBytes) throw new AppError('too_large', `The upload is larger than this server accepts (${ops.maxUploadBytes} bytes).`);
      // The declared length lets an object store size its upload parts for the file.
      const entry = await ops.writeFile(key, request.raw, {
        sizeHint: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
        ...writePreconditions(request),
        sha256: sentDigest(request.headers),
      });
      // The new version's validator, so an editor can send it as If-Match on its next save.
      reply.header('etag', entry.etag);
      written = [{ key, entry }];
    }
    return reply.code(201).send(await writtenAnswer(as(request), key, written));
  }));

  scope.delete('/storage/*', { ...write, schema: deleteSchema }, async (request, reply) => {
    await as(request).delete(target(request).key, writePreconditions(request));
    return reply.code(204).send();
  });
  scope.post('/storage/*', { ...actions, schema: postSchema }, async (request, reply) => {
    const { key } = target(request);
    const body = objectBody(request.body);
    const action = body.action;
    if (action === undefined) throw new AppError('unknown_action', 'The field "action" is required: MakePathToken, CreateFolder, Move or Copy.');
    switch (action) {
      case 'MakePathToken': {
        const ops = as(request);
        // Through a grant, the token names its maker: it works only while the grant still reaches the path.
        const grant = await ops.may(key, 'GET');
        await ops.stat(key);
        const { token, expiresAt } = await deps.pathTokens.make(key, optionalInteger(body, 'valid_for_seconds'), grant ? ops.principal.username : undefined);
        reply.header('x-expires-at', new Date(expiresAt * 1000).toISOString()).header('cache-control', 'no-store');
        return { token };
      }
      case 'CreateFolder':
        await as(request).createFolder(key);
        return reply.code(201).send();
      case 'Move':
      case 'Copy': {
        const newPath = requiredString(body, 'new_path').replace(/^\//, '');
        const dest = parseDecodedStoragePath(newPath.includes('/') ? newPath : `${newPath}/`).key;
        const overwrite = optionalBoolean(body, 'overwrite') ?? false;
        await (action === 'Copy' ? as(request).copy(key, dest, overwrite) : as(request).move(key, dest, overwrite, writePreconditions(request)));
        return reply.code(204).send();
      }
      case 'restore_version': {
        await as(request).restoreVersion(key, requiredString(body, 'version'));
        return reply.code(204).send();
      }
      default:
        throw new AppError('unknown_action', `Unknown action ${JSON.stringify(action).slice(0, 60)}: use MakePathToken, CreateFolder, Move or Copy.`);
    }
  });
}
