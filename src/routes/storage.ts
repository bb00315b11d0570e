import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isRoot, parseDecodedStoragePath, parseStoragePath, type ParsedStoragePath } from '../domain/storage-path.js';
import { rawStoragePath } from '../http/url.js';
import type { AccessRule, Resource } from '../domain/access.js';
import { lastSegment, multipartFiles } from '../http/multipart.js';
import type { FilesService, UploadPart } from '../services/files.js';
import type { PathTokenService } from '../services/path-token-service.js';
import type { StorageBackend } from '../storage/backend.js';
import { objectBody, optionalBoolean, optionalInteger, requiredString } from './body.js';
import { readJsonBody } from './json-body.js';
import { serveFile } from './serve-file.js';
import { sendFolderZip, zipNames } from './zip-reply.js';

const JSON_LIMIT = 64 * 1024;

/**
 * /storage/<user>/<...path>: seed §4.3–4.7, CONTRACT "Storage paths" to
 * "Path tokens". Handlers parse the path, check ownership, call one files
 * service method, and set the HTTP headers.
 */
export async function storageRoutes(scope: FastifyInstance, deps: { files: FilesService; pathTokens: PathTokenService; backend: StorageBackend; basePath?: string }): Promise<void> {
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
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-security-policy', 'sandbox');
  });

  // What the URL names: the access check compares its owner with the caller's and a path token's path with it.
  const resource = (request: FastifyRequest): Resource => {
    const raw = rawStoragePath(request.url, deps.basePath);
    if (raw === undefined) throw new AppError('not_found', 'Nothing exists at this address.');
    return { kind: 'storage', ...parseStoragePath(raw) };
  };
  const target = (request: FastifyRequest): ParsedStoragePath => request.resource as ParsedStoragePath & Resource;

  const read = { config: { access: { who: 'user', pathToken: true } as AccessRule, resource }, exposeHeadRoute: false };
  const write = { config: { access: { who: 'user' } as AccessRule, resource } };

  scope.get('/storage/*', read, async (request, reply) => serve(request, reply, target(request), true));
  scope.head('/storage/*', read, async (request, reply) => serve(request, reply, target(request), false));

  async function serve(request: FastifyRequest, reply: FastifyReply, { key, trailingSlash }: ParsedStoragePath, withBody: boolean) {
    const entry = await files.stat(key);
    const query = request.query as Record<string, unknown>;
    if (query.zip === '1' || query.zip === 'true') {
      if (entry.isFile) throw new AppError('not_a_directory', 'Only a folder can be downloaded as a zip.');
      return sendFolderZip(request, reply, { backend: deps.backend, folder: key, names: zipNames(query.name) });
    }
    if (!entry.isFile) {
      reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8');
      if (!withBody) return reply.send();
      const entries = await files.list(key);
      return { entries: entries.map((e) => ({ is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString() })) };
    }
    // A trailing slash addresses a folder; there is none here.
    if (trailingSlash) throw new AppError('not_found', 'No folder exists at this path.');
    return serveFile(request, reply, files, key, entry, { download: query.download === '1' || query.download === 'true', withBody });
  }

  scope.put('/storage/*', write, async (request, reply) => {
    const { key, trailingSlash } = target(request);
    const query = request.query as Record<string, unknown>;
    const overwrite = query.overwrite === 'true' || query.overwrite === '1';
    const contentType = request.headers['content-type'] ?? '';
    let written: string[];
    if (/^multipart\/form-data\b/i.test(contentType)) {
      written = await files.writeParts(key, uploadParts(request), { overwrite });
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
      written = [await files.writeFile(key, request.raw, { sizeHint: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined })];
    }
    return reply.code(201).send({ files_written: written });
  });

  function uploadParts(request: FastifyRequest): AsyncIterable<UploadPart> {
    const parts = multipartFiles(request.raw, request.headers, { maxFileBytes: files.maxUploadBytes });
    return (async function* () {
      for await (const part of parts) yield { filename: lastSegment(part.filename), stream: part.stream };
    })();
  }

  scope.delete('/storage/*', write, async (request, reply) => {
    await files.delete(target(request).key);
    return reply.code(204).send();
  });

  scope.post('/storage/*', write, async (request, reply) => {
    const { key } = target(request);
    const body = objectBody(request.body);
    const action = body.action;
    if (action === undefined) throw new AppError('unknown_action', 'The field "action" is required: MakePathToken, CreateFolder or Move.');
    switch (action) {
      case 'MakePathToken': {
        await files.stat(key);
        const { token, expiresAt } = await deps.pathTokens.make(key, optionalInteger(body, 'valid_for_seconds'));
        reply.header('x-expires-at', new Date(expiresAt * 1000).toISOString()).header('cache-control', 'no-store');
        return { token };
      }
      case 'CreateFolder':
        await files.createFolder(key);
        return reply.code(201).send();
      case 'Move': {
        const newPath = requiredString(body, 'new_path').replace(/^\//, '');
        const dest = parseDecodedStoragePath(newPath.includes('/') ? newPath : `${newPath}/`).key;
        if (dest.user !== key.user) throw new AppError('unauthorized', 'You are not allowed to access this path.');
        await files.move(key, dest, optionalBoolean(body, 'overwrite') ?? false);
        return reply.code(204).send();
      }
      default:
        throw new AppError('unknown_action', `Unknown action ${JSON.stringify(action).slice(0, 60)}: use MakePathToken, CreateFolder or Move.`);
    }
  });
}
