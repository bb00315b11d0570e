import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { isRoot, isSameOrInside, keyName, keyParent, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { Entry, StorageBackend } from '../storage/backend.js';
import type { FilesService } from '../services/files.js';
import type { UsageService } from '../services/usage.js';
import { storageCall } from '../services/storage-errors.js';
import type { DavLock, DeadProperty, DeadPropertyTotals, MetadataStore } from '../store/types.js';
import type { AccessRule, Resource as UrlTarget } from '../domain/access.js';
import { evaluateIf, IfHeaderError, parseIfHeader, submittedTokens, type IfHeader } from '../dav/if-header.js';
import { assertTokensHeld, locksOver, parentPath, parseTimeout, type WriteScope } from '../dav/locks.js';
import { DAV_PREFIX, encodeSegment, hrefFor, parseDavPath, parseDestination, rawDavPath, resourcePath, type DavTarget } from '../dav/paths.js';
import {
  activeLock,
  DAV_NS,
  isLiveProperty,
  MULTISTATUS_CLOSE,
  MULTISTATUS_OPEN,
  parsePropertyUpdate,
  parsePropfind,
  propfindRenderer,
  propfindResponse,
  statusLine,
  emptyElement,
  wants,
  wantsDead,
  type Resource,
} from '../dav/props.js';
import { readXmlBody } from '../dav/request-body.js';
import { child, serializeElement } from '../dav/xml.js';
import { serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import { bytes, empty, errors, fileAnswers, header as responseHeader, type JsonSchema, type ResponseSpec, type RouteSchema } from './schemas.js';

/** Methods of WebDAV class 1 and 2 that /dav/ answers (CONTRACT "WebDAV"). */
const METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;
const ALLOW = METHODS.join(', ');
const XML_TYPE = 'application/xml; charset=utf-8';
/** A streamed multistatus is written in pieces of about this many characters. */
const STREAM_BATCH_CHARS = 64 * 1024;
const NONE: readonly never[] = [];

export type DavDeps = {
  readonly files: FilesService;
  readonly usage: UsageService;
  readonly backend: StorageBackend;
  readonly store: MetadataStore;
  readonly clock: Clock;
  readonly basePath: string;
  /** Bytes free for new files, when the backend can tell (local disk); RFC 4331 quota-available-bytes. */
  readonly freeBytes?: () => Promise<number | undefined>;
  /** Per user: dead properties (how many, their size) and live locks (docs/webdav.md "Limits"). */
  readonly limits: { readonly properties: number; readonly propertySize: number; readonly locks: number };
};

/** Over a per-user WebDAV limit: the one error for dead properties and locks (RFC 4918 §9.2.1, §9.10.6: 507). */
const davLimit = (what: string) => new AppError('dav_limit_reached', `${what} (docs/webdav.md "Limits"). Remove some first.`);

/**
 * /dav/<user>/...: the same tree as /storage/<user>/ over WebDAV class 1
 * and 2 (RFC 4918). Handlers follow the RFC's order of checks: target,
 * ownership, preconditions (parent, Overwrite), locks (423), then the If
 * header (412), then the change. Locks and dead properties live in the
 * metadata store, so every worker and node sees them.
 */
export async function davRoutes(scope: FastifyInstance, deps: DavDeps): Promise<void> {
  const { files, backend, store, clock, basePath } = deps;
  const propertyLimit = { count: deps.limits.properties, size: deps.limits.propertySize };

  /**
   * A COPY duplicates the source's dead properties: refused before anything
   * is copied when they would not fit (checked ahead, so concurrent
   * requests may pass the limit by what they add, as with PROPPATCH on
   * PostgreSQL).
   */
  async function roomForCopies(user: string, adding: DeadPropertyTotals, freed: DeadPropertyTotals): Promise<void> {
    if (adding.count === 0) return;
    const now = await store.davProperties.totals(user);
    if (now.count - freed.count + adding.count > propertyLimit.count || now.size - freed.size + adding.size > propertyLimit.size) {
      throw davLimit(`The copy's dead properties would pass the ${deps.limits.properties} properties of ${deps.limits.propertySize} characters you may keep`);
    }
  }

  // Bodies are users' bytes (PUT) or XML this module reads itself with its own limits.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('dav', '1, 2').header('ms-author-via', 'DAV');
  });
  scope.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-security-policy', 'sandbox');
  });

  // What the URL names: the caller's own tree only (the access check compares owners); the top is nobody's.
  const resource = (request: FastifyRequest): UrlTarget => {
    const target = parseDavPath(rawDavPath(request.url, basePath) ?? '');
    return target.kind === 'top' ? { kind: 'none' } : { kind: 'storage', key: target.key, trailingSlash: target.trailingSlash };
  };
  const targetOf = (request: FastifyRequest): DavTarget =>
    request.resource.kind === 'storage' ? { kind: 'entry', key: request.resource.key, trailingSlash: request.resource.trailingSlash } : { kind: 'top' };
  // Basic with the account or an app password, or a Bearer token; writes need a key that is not read-only.
  const signedIn: AccessRule = { who: 'user', basic: true };

  const options = async (_request: FastifyRequest, reply: FastifyReply) => reply.header('allow', ALLOW).header('content-length', '0').code(200).send();

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const target = targetOf(request);
    const principal = request.principal as Principal;
    if (target.kind === 'top') {
      if (request.method === 'PROPFIND') return propfindTop(request, reply, principal);
      throw new AppError('method_not_allowed', `Only PROPFIND and OPTIONS apply to ${basePath}${DAV_PREFIX}; your files are under ${basePath}${DAV_PREFIX}${principal.username}/.`, { headers: { allow: 'OPTIONS, PROPFIND' } });
    }
    const { key } = target;
    const cond = conditions(request);
    switch (request.method) {
      case 'GET':
      case 'HEAD':
        await checkIf(cond, key);
        return get(request, reply, target, request.method === 'GET');
      case 'PUT':
        return put(request, reply, key, cond);
      case 'DELETE':
        return del(reply, key, cond, principal);
      case 'MKCOL':
        return mkcol(request, reply, key, cond, principal);
      case 'PROPFIND':
        await checkIf(cond, key);
        return propfind(request, reply, target);
      case 'PROPPATCH':
        return proppatch(request, reply, key, cond, principal);
      case 'COPY':
      case 'MOVE':
        return copyOrMove(request, reply, key, cond, principal, request.method === 'MOVE');
      case 'LOCK':
        return lock(request, reply, key, cond, principal);
      case 'UNLOCK':
        return unlock(request, reply, key, principal);
      default:
        throw new AppError('method_not_allowed', `${request.method} is not a WebDAV method this server supports.`, { headers: { allow: ALLOW } });
    }
  };
  for (const method of METHODS.filter((m) => !['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'].includes(m))) scope.addHttpMethod(method, { hasBody: true });
  // One route per method, so each method has its own schema (OpenAPI). OPTIONS answers without
  // credentials: the Windows Mini-Redirector probes with it first.
  for (const method of [...METHODS, 'POST', 'PATCH'] as const) {
    for (const url of ['/dav/*', '/dav']) {
      const schema = davSchema(method, url === '/dav/*');
      if (method === 'OPTIONS') scope.options(url, { config: { access: { who: 'public' } }, schema }, options);
      else scope.route({ method, url, exposeHeadRoute: false, config: { access: signedIn, resource }, schema, handler });
    }
  }

  // ---------------------------------------------------------------- If header and locks

  type Conditions = { readonly header: IfHeader | undefined; readonly tokens: ReadonlySet<string> };

  function conditions(request: FastifyRequest): Conditions {
    const raw = request.headers.if;
    if (raw === undefined) return { header: undefined, tokens: new Set() };
    try {
      const header = parseIfHeader(String(raw));
      return { header, tokens: new Set(submittedTokens(header)) };
    } catch (e) {
      if (e instanceof IfHeaderError) throw new AppError('bad_request', `The If header is malformed: ${e.message}`);
      throw e;
    }
  }

  /** 423 unless every lock in the way has its token submitted. */
  async function checkLocks(user: string, scopes: readonly WriteScope[], cond: Conditions, principal: Principal, extra: readonly string[] = []): Promise<void> {
    const locks = await locksOver(store.davLocks, user, scopes, clock.now());
    if (locks.length === 0) return;
    assertTokensHeld(locks, new Set([...cond.tokens, ...extra]), principal.username);
  }

  /** 412 when an If header is present and false (RFC 4918 §10.4). */
  async function checkIf(cond: Conditions, key: StorageKey): Promise<void> {
    if (!cond.header) return;
    const states = new Map<string, { etag?: string; lockTokens: string[] } | undefined>();
    const resources = [undefined, ...cond.header.lists.map((l) => l.resource)];
    for (const r of resources) {
      const id = r ?? '';
      if (states.has(id)) continue;
      const k = r === undefined ? key : keyOfUri(r);
      states.set(id, k && k.user === key.user ? await stateOf(k) : undefined);
    }
    if (!evaluateIf(cond.header, (r) => states.get(r ?? ''))) {
      throw new AppError('precondition_failed', 'The If header does not match the current state (lock tokens or ETags) of the resource.');
    }
  }

  function keyOfUri(uri: string): StorageKey | undefined {
    try {
      const t = parseDestination(uri, basePath);
      return t.kind === 'entry' ? t.key : undefined;
    } catch {
      return undefined;
    }
  }

  async function stateOf(key: StorageKey): Promise<{ etag?: string; lockTokens: string[] }> {
    const [entry, locks] = await Promise.all([storageCall(() => backend.stat(key)), store.davLocks.covering(key.user, resourcePath(key), clock.now())]);
    return { etag: entry?.etag, lockTokens: locks.map((l) => l.token) };
  }

  // ---------------------------------------------------------------- GET, HEAD

  async function get(request: FastifyRequest, reply: FastifyReply, target: Extract<DavTarget, { kind: 'entry' }>, withBody: boolean) {
    const entry = await files.stat(target.key);
    if (!entry.isFile) {
      // A collection's GET is the storage API's JSON listing: one shape for both doors.
      return sendListing(reply, files, target.key, withBody);
    }
    if (target.trailingSlash) throw new AppError('not_found', 'No collection exists at this path.');
    return serveFile(request, reply, files, target.key, entry, { download: false, withBody });
  }

  // ---------------------------------------------------------------- PUT, DELETE, MKCOL

  /** The parent collection must exist (RFC 4918 §9.7.1, §9.3.1: 409 otherwise). */
  async function assertParentCollection(key: StorageKey): Promise<void> {
    const parent = await storageCall(() => backend.stat(keyParent(key)));
    if (!parent || parent.isFile) throw new AppError('not_a_directory', 'The parent collection does not exist; create it first (MKCOL).');
  }

  async function put(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: Conditions) {
    if (isRoot(key)) throw new AppError('method_not_allowed', 'PUT cannot replace a collection.', { headers: { allow: 'OPTIONS, PROPFIND, PROPPATCH, LOCK, UNLOCK' } });
    const existing = await storageCall(() => backend.stat(key));
    if (existing && !existing.isFile) throw new AppError('method_not_allowed', 'A collection is at this path; PUT cannot replace it.');
    if (!existing) await assertParentCollection(key);
    await checkLocks(key.user, [{ path: resourcePath(key), member: !existing }], cond, request.principal as Principal);
    await checkIf(cond, key);
    // Finder sends chunked PUTs with the length in X-Expected-Entity-Length.
    const declared = Number(request.headers['content-length'] ?? request.headers['x-expected-entity-length']);
    if (files.maxUploadBytes !== undefined && declared > files.maxUploadBytes) {
      throw new AppError('too_large', `The upload is larger than this server accepts (${files.maxUploadBytes} bytes).`);
    }
    await files.writeFile(key, request.raw, { sizeHint: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined });
    const written = await storageCall(() => backend.stat(key));
    if (written?.etag) reply.header('etag', written.etag);
    return reply.code(existing ? 204 : 201).send();
  }

  async function del(reply: FastifyReply, key: StorageKey, cond: Conditions, principal: Principal) {
    if (isRoot(key)) throw new AppError('forbidden', 'The root of your storage cannot be deleted.');
    await files.statOrThrow(key);
    const path = resourcePath(key);
    await checkLocks(key.user, [{ path, tree: true, member: true }], cond, principal);
    await checkIf(cond, key);
    await files.delete(key);
    await forget(key.user, path);
    return reply.code(204).send();
  }

  /** Locks and dead properties of a tree that no longer exists. */
  async function forget(user: string, path: string): Promise<void> {
    await store.davLocks.deleteWithin(user, path);
    await store.davProperties.deleteTree(user, path);
  }

  async function mkcol(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: Conditions, principal: Principal) {
    if (hasBody(request)) {
      request.raw.resume();
      throw new AppError('unsupported_media_type', 'MKCOL takes no request body.');
    }
    if (await storageCall(() => backend.stat(key))) throw new AppError('method_not_allowed', 'Something already exists at this path.', { headers: { allow: 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, LOCK, UNLOCK' } });
    await assertParentCollection(key);
    await checkLocks(key.user, [{ path: resourcePath(key), member: true }], cond, principal);
    await checkIf(cond, key);
    await storageCall(() => backend.mkdir(key, { parents: false, existOk: false }), { already_exists: 'Something already exists at this path.' });
    return reply.code(201).send();
  }

  // ---------------------------------------------------------------- COPY, MOVE

  async function copyOrMove(request: FastifyRequest, reply: FastifyReply, from: StorageKey, cond: Conditions, principal: Principal, move: boolean) {
    const dest = parseDestination(header(request, 'destination'), basePath);
    if (dest.kind === 'top' || dest.key.user !== from.user) throw new AppError('forbidden', 'The Destination must lie inside your own storage.');
    const to = dest.key;
    const depth = depthOf(request, 'infinity');
    if (depth === '1' || (move && depth !== 'infinity')) throw new AppError('bad_request', `${request.method} takes Depth: infinity${move ? '' : ' or 0'}.`);
    const overwriteHeader = header(request, 'overwrite')?.trim().toUpperCase() ?? 'T';
    if (overwriteHeader !== 'T' && overwriteHeader !== 'F') throw new AppError('bad_request', 'Overwrite must be T or F.');
    const source = await files.statOrThrow(from);
    if (isRoot(from) && move) throw new AppError('forbidden', 'The root of your storage cannot be moved.');
    if (isSameOrInside(to, from) && (move || !source.isFile)) throw new AppError('forbidden', 'The Destination is the source itself or lies inside it.');
    if (isRoot(to)) throw new AppError('forbidden', 'The root of your storage cannot be replaced.');
    await assertParentCollection(to);
    const existing = await storageCall(() => backend.stat(to));
    if (existing && overwriteHeader === 'F') throw new AppError('precondition_failed', 'The Destination exists and Overwrite is F.');
    const scopes: WriteScope[] = [{ path: resourcePath(to), tree: !!existing, member: true }];
    if (move) scopes.push({ path: resourcePath(from), tree: true, member: true });
    await checkLocks(from.user, scopes, cond, principal);
    await checkIf(cond, from);
    // A copy's bytes go through the files service, which holds them to the owner's quota (507, nothing kept).
    const copying = !move && !(depth === '0' && !source.isFile);
    // A copy's dead properties must fit before anything changes (the replaced destination's go first, so they make room).
    const ownProps = !move && depth === '0' && !source.isFile ? await store.davProperties.list(from.user, resourcePath(from)) : [];
    const propertiesFit = async () => {
      if (move) return;
      const adding = depth === '0' && !source.isFile ? { count: ownProps.length, size: ownProps.reduce((n, p) => n + [...p.xml].length, 0) } : await store.davProperties.totals(from.user, resourcePath(from));
      await roomForCopies(to.user, adding, existing ? await store.davProperties.totals(to.user, resourcePath(to)) : { count: 0, size: 0 });
    };
    if (copying) {
      // RFC 4918 §9.8.4: an overwritten destination is deleted first, with its locks and properties.
      await files.copyReplacing(from, to, { source, replacing: existing ?? undefined, beforeChange: propertiesFit, removed: () => forget(to.user, resourcePath(to)) });
      await store.davProperties.copyTree(from.user, resourcePath(from), resourcePath(to));
      return reply.code(existing ? 204 : 201).send();
    }
    await propertiesFit();
    if (existing) {
      // RFC 4918 §9.8.4 / §9.9.3: an overwritten destination is deleted first, with its locks and properties.
      await storageCall(() => backend.delete(to, { recursive: true }));
      await forget(to.user, resourcePath(to));
    }
    if (move) {
      await storageCall(() => backend.move(from, to, { overwrite: true }));
      await store.davLocks.deleteWithin(from.user, resourcePath(from));
      await store.davProperties.moveTree(from.user, resourcePath(from), resourcePath(to));
    } else {
      await storageCall(() => backend.mkdir(to, { parents: false, existOk: true }));
      if (ownProps.length > 0) await store.davProperties.patch(to.user, resourcePath(to), ownProps.map((prop) => ({ op: 'set', prop })));
    }
    return reply.code(existing ? 204 : 201).send();
  }

  // ---------------------------------------------------------------- PROPFIND, PROPPATCH

  async function propfind(request: FastifyRequest, reply: FastifyReply, target: Extract<DavTarget, { kind: 'entry' }>) {
    const depth = depthOf(request, 'infinity');
    if (depth === 'infinity') throw new AppError('propfind_finite_depth', 'PROPFIND with Depth: infinity (or no Depth header) is not supported; send Depth: 0 or 1.');
    const req = parsePropfind(await readXmlBody(request));
    const { key } = target;
    const entry = await files.stat(key);
    if (entry.isFile && target.trailingSlash) throw new AppError('not_found', 'No collection exists at this path.');
    // Members in the listing order straight from the backend (sorted once), streamed page by page below.
    const members = depth === '1' && !entry.isFile ? await files.listSorted(key, { etags: true }) : undefined;
    const withMembers = members !== undefined;
    const path = resourcePath(key);
    const now = clock.now();
    const [dead, locks, quota] = await Promise.all([
      wantsDead(req) ? deadProperties(key.user, path, withMembers) : new Map<string, DeadProperty[]>(),
      wants(req, 'lockdiscovery') ? lockMap(key.user, path, withMembers, now) : () => [],
      wants(req, 'quota-used-bytes') || wants(req, 'quota-available-bytes') ? quotaOf(key.user) : undefined,
    ]);
    const lockroot = (l: DavLock) => hrefFor(basePath, { user: l.user, segments: l.path === '' ? [] : l.path.split('/') }, false);
    const render = propfindRenderer(req, lockroot);
    const top = render({ href: hrefFor(basePath, key, !entry.isFile), name: isRoot(key) ? key.user : keyName(key), entry, locks: locks(path), dead: dead.get(path) ?? [], quota, now });
    if (!members) return multistatus(reply, [MULTISTATUS_OPEN, top, MULTISTATUS_CLOSE]);
    // Members share the folder's href and path: only their own name is encoded per entry.
    const dirHref = hrefFor(basePath, key, true);
    const dirPath = path === '' ? '' : `${path}/`;
    async function* body(pages: AsyncIterable<Entry[]>): AsyncGenerator<string> {
      let batch = MULTISTATUS_OPEN + top;
      for await (const page of pages) {
        for (const m of page) {
          const p = dirPath + m.name;
          batch += render({ href: dirHref + encodeSegment(m.name) + (m.isFile ? '' : '/'), name: m.name, entry: m, locks: locks(p), dead: dead.get(p) ?? NONE, quota, now });
          if (batch.length >= STREAM_BATCH_CHARS) {
            yield batch;
            batch = '';
          }
        }
      }
      yield batch + MULTISTATUS_CLOSE;
    }
    // Streamed in batches: a big folder's multistatus never sits in memory whole.
    return reply.code(207).type(XML_TYPE).send(Readable.from(body(members), { objectMode: false }));
  }

  async function deadProperties(user: string, path: string, withMembers: boolean) {
    const byPath = new Map<string, DeadProperty[]>();
    byPath.set(path, await store.davProperties.list(user, path));
    if (withMembers) {
      for (const p of await store.davProperties.listChildren(user, path)) byPath.set(p.path, [...(byPath.get(p.path) ?? []), p]);
    }
    return byPath;
  }

  /** The locks that apply to the resource (those covering it) and to each member (inherited depth-infinity ones plus its own). */
  async function lockMap(user: string, path: string, withMembers: boolean, now: number): Promise<(p: string) => DavLock[]> {
    const [covering, within] = await Promise.all([store.davLocks.covering(user, path, now), withMembers ? store.davLocks.within(user, path, now) : []]);
    const inherited = covering.filter((l) => l.depth === 'infinity');
    const own = new Map<string, DavLock[]>();
    for (const l of within) if (l.path !== path) own.set(l.path, [...(own.get(l.path) ?? []), l]);
    return (p) => {
      if (p === path) return covering;
      const mine = own.get(p);
      return mine ? [...inherited, ...mine] : inherited;
    };
  }

  /**
   * RFC 4331: used bytes from the usage figures; available is what the quota
   * leaves (or the disk's free space when it is smaller, or alone without a quota).
   */
  async function quotaOf(user: string): Promise<{ used: number; available?: number }> {
    const [{ used, quota }, free] = await Promise.all([deps.usage.get(user), deps.freeBytes?.()]);
    const left = quota === undefined ? undefined : Math.max(0, quota - used);
    const available = left === undefined ? free : free === undefined ? left : Math.min(left, free);
    return { used: Math.max(0, used), available };
  }

  async function propfindTop(request: FastifyRequest, reply: FastifyReply, principal: Principal) {
    const depth = depthOf(request, 'infinity');
    if (depth === 'infinity') throw new AppError('propfind_finite_depth', 'PROPFIND with Depth: infinity (or no Depth header) is not supported; send Depth: 0 or 1.');
    const req = parsePropfind(await readXmlBody(request));
    const own = { user: principal.username, segments: [] };
    const rootEntry = await files.stat(own);
    const now = clock.now();
    const top: Resource = { href: `${basePath}${DAV_PREFIX}`, name: 'dav', entry: { ...rootEntry, name: '' }, locks: [], dead: [], now };
    const parts = [MULTISTATUS_OPEN, propfindResponse(req, top, () => '')];
    if (depth === '1') parts.push(propfindResponse(req, { href: hrefFor(basePath, own, true), name: own.user, entry: rootEntry, locks: [], dead: [], now }, () => ''));
    parts.push(MULTISTATUS_CLOSE);
    return multistatus(reply, parts);
  }

  async function proppatch(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: Conditions, principal: Principal) {
    const patches = parsePropertyUpdate(await readXmlBody(request));
    await files.statOrThrow(key);
    const path = resourcePath(key);
    await checkLocks(key.user, [{ path }], cond, principal);
    await checkIf(cond, key);
    const names = patches.map((p) => (p.op === 'set' ? { ns: p.el.ns, local: p.el.local } : p.name));
    const isProtected = (n: { ns: string; local: string }) => isLiveProperty(n);
    let body: string;
    if (names.some(isProtected)) {
      // All or nothing (RFC 4918 §9.2): one protected property fails the whole request.
      const forbidden = names.filter(isProtected).map(emptyElement).join('');
      const dependent = names.filter((n) => !isProtected(n)).map(emptyElement).join('');
      body = `<D:propstat><D:prop>${forbidden}</D:prop>${statusLine(403)}</D:propstat>` + (dependent ? `<D:propstat><D:prop>${dependent}</D:prop>${statusLine(424)}</D:propstat>` : '');
    } else {
      const done = await store.davProperties.patch(
        key.user,
        path,
        patches.map((p) => (p.op === 'set' ? { op: 'set', prop: { ns: p.el.ns, name: p.el.local, xml: serializeElement(p.el) } } : { op: 'remove', ns: p.name.ns, name: p.name.local })),
        propertyLimit,
      );
      if (!done) throw davLimit(`You may keep at most ${deps.limits.properties} dead properties of ${deps.limits.propertySize} characters in all`);
      body = `<D:propstat><D:prop>${names.map(emptyElement).join('')}</D:prop>${statusLine(200)}</D:propstat>`;
    }
    const entry = await files.statOrThrow(key);
    return multistatus(reply, [MULTISTATUS_OPEN, `<D:response><D:href>${hrefFor(basePath, key, !entry.isFile)}</D:href>${body}</D:response>`, MULTISTATUS_CLOSE]);
  }

  // ---------------------------------------------------------------- LOCK, UNLOCK

  async function lock(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: Conditions, principal: Principal) {
    const info = await readXmlBody(request);
    const path = resourcePath(key);
    const now = clock.now();
    const timeoutSeconds = parseTimeout(header(request, 'timeout'));
    if (!info) {
      // A refresh (RFC 4918 §9.10.2): the lock is named in the If header.
      if (cond.tokens.size === 0) throw new AppError('bad_request', 'A LOCK without a body refreshes a lock: name it in an If header.');
      await checkIf(cond, key);
      const covering = await store.davLocks.covering(key.user, path, now);
      const held = covering.filter((l) => cond.tokens.has(l.token));
      if (held.length === 0) throw new AppError('precondition_failed', 'No lock named in the If header applies to this resource.');
      const refreshed = (await Promise.all(held.map((l) => store.davLocks.refresh(l.token, timeoutSeconds, now)))).filter((l): l is DavLock => l !== undefined);
      return lockAnswer(reply, 200, refreshed, now);
    }
    if (info.ns !== DAV_NS || info.local !== 'lockinfo') throw new AppError('bad_request', 'The LOCK body must be a DAV:lockinfo element.');
    const scopeEl = child(info, DAV_NS, 'lockscope');
    const scope = scopeEl && child(scopeEl, DAV_NS, 'exclusive') ? 'exclusive' : scopeEl && child(scopeEl, DAV_NS, 'shared') ? 'shared' : undefined;
    const typeEl = child(info, DAV_NS, 'locktype');
    if (!scope || !typeEl || !child(typeEl, DAV_NS, 'write')) throw new AppError('bad_request', 'LOCK needs a lockscope (exclusive or shared) and the write locktype.');
    const depth = depthOf(request, 'infinity');
    if (depth === '1') throw new AppError('bad_request', 'LOCK takes Depth: 0 or infinity.');
    const ownerEl = child(info, DAV_NS, 'owner');
    const entry = await storageCall(() => backend.stat(key));
    if (!entry) {
      await assertParentCollection(key);
      // Creating the empty resource changes its parent; locks on the target itself only conflict (below), as shared locks stack.
      await checkLocks(key.user, [{ path: parentPath(path) }], cond, principal);
    }
    await checkIf(cond, key);
    const lock: DavLock = {
      token: `urn:uuid:${randomUUID()}`,
      user: key.user,
      path,
      depth: depth === '0' || entry?.isFile ? 0 : 'infinity',
      scope,
      owner: ownerEl ? serializeElement(ownerEl) : '',
      principal: principal.username,
      timeoutSeconds,
      createdAt: now,
      expiresAt: now + timeoutSeconds * 1000,
    };
    const made = await store.davLocks.create(lock, now, deps.limits.locks);
    if (!made.created && 'tooMany' in made) throw davLimit(`You may hold at most ${deps.limits.locks} locks at once`);
    if (!made.created) throw new AppError('locked', `"/${path}" is already locked by a conflicting lock.`);
    if (!entry) {
      // RFC 4918 §7.3: LOCK on an unmapped URL creates an empty resource.
      await storageCall(() => backend.write(key, Readable.from([]), { ifExists: 'fail' })).catch((e: unknown) => {
        if (!(e instanceof AppError && e.code === 'already_exists')) throw e;
      });
    }
    reply.header('lock-token', `<${lock.token}>`);
    return lockAnswer(reply, entry ? 200 : 201, [lock], now);
  }

  function lockAnswer(reply: FastifyReply, status: number, locks: readonly DavLock[], now: number) {
    const lockroot = (l: DavLock) => hrefFor(basePath, { user: l.user, segments: l.path === '' ? [] : l.path.split('/') }, false);
    const body = `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${locks.map((l) => activeLock(l, lockroot(l), now)).join('')}</D:lockdiscovery></D:prop>\n`;
    return reply.code(status).type(XML_TYPE).send(body);
  }

  async function unlock(request: FastifyRequest, reply: FastifyReply, key: StorageKey, principal: Principal) {
    const m = /^\s*<([^>]+)>\s*$/.exec(header(request, 'lock-token') ?? '');
    if (!m) throw new AppError('bad_request', 'UNLOCK needs a Lock-Token header: <urn:uuid:…>.');
    const token = m[1] as string;
    const path = resourcePath(key);
    const lock = await store.davLocks.get(token, clock.now());
    const applies = lock && lock.user === key.user && (lock.path === path || (lock.depth === 'infinity' && (lock.path === '' || path.startsWith(`${lock.path}/`))));
    if (!lock || !applies) throw new AppError('lock_token_mismatch', 'That lock token does not name a lock on this resource.');
    if (lock.principal !== principal.username) throw new AppError('forbidden', 'That lock belongs to another user.');
    await store.davLocks.delete(token);
    return reply.code(204).send();
  }

  // ---------------------------------------------------------------- helpers

  function multistatus(reply: FastifyReply, parts: string[]) {
    return reply.code(207).type(XML_TYPE).send(parts.join(''));
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The Depth header (RFC 4918 §10.2): `0`, `1` or `infinity`; absent means `fallback`. */
function depthOf(request: FastifyRequest, fallback: '0' | '1' | 'infinity'): '0' | '1' | 'infinity' {
  const v = header(request, 'depth')?.trim().toLowerCase();
  if (v === undefined) return fallback;
  if (v === '0' || v === '1' || v === 'infinity') return v;
  throw new AppError('bad_request', 'Depth must be 0, 1 or infinity.');
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

// ---------------------------------------------------------------- schemas (documentation: src/routes/schemas.ts)

const DAV_TAG = ['WebDAV'];
const XML = (description: string, headers?: ResponseSpec['headers']) => bytes(description, ['application/xml'], headers);
const xmlBody = (description: string): RouteSchema['body'] => ({ required: false, description, content: { 'application/xml': { schema: { type: 'string', contentMediaType: 'application/xml' } } } });
const davPath: JsonSchema = {
  type: 'object',
  properties: { '*': { type: 'string', description: '`<user>/<...path>`, the same tree as /storage/<user>/; empty (`/dav/`) is the top, where PROPFIND shows your own root only.' } },
};
const common = {
  400: 'A bad path or header (`invalid_path`, `bad_request`).',
  401: 'No valid credentials, or another user\'s tree (`unauthorized`, with `WWW-Authenticate: Basic realm="File Cloud"`); failures count towards the login throttle.',
  429: 'Too many failed sign-ins from this address (`rate_limited`).',
};
const lockErrors = {
  412: 'An `If` header that is false, or `Overwrite: F` onto an existing target (`precondition_failed`).',
  423: 'Locked, and the lock token is not in `If` (`locked`).',
};
const credentials: RouteSchema['security'] = [{ basicAuth: [] }, { bearerAuth: [] }];
const lockHeaders = { 'if': { type: 'string', description: 'RFC 4918 `If` header with lock tokens and ETags.' } };

const DAV_METHODS: Record<string, Omit<RouteSchema, 'tags' | 'params' | 'security'>> = {
  OPTIONS: {
    summary: 'WebDAV capabilities (no credentials needed)',
    response: { 200: empty('`DAV: 1, 2`, `MS-Author-Via: DAV` and `Allow`.', { dav: responseHeader('`1, 2`.'), allow: responseHeader(ALLOW) }), ...errors({ 400: common[400] }) },
  },
  GET: {
    summary: 'Download a file',
    response: { ...fileAnswers, ...errors({ ...common, 404: 'Nothing at this path (`not_found`).', 405: 'A collection: use PROPFIND (`method_not_allowed`).', 412: lockErrors[412], 416: 'The range is outside the file.' }) },
  },
  HEAD: {
    summary: 'The headers of a file',
    response: { 200: fileAnswers[200], 304: fileAnswers[304], ...errors({ ...common, 404: 'Nothing at this path.', 412: lockErrors[412] }) },
  },
  PUT: {
    summary: 'Write a file (created or atomically replaced)',
    headers: { type: 'object', properties: lockHeaders },
    body: { required: true, content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
    response: {
      201: empty('Created.'),
      204: empty('Replaced.'),
      ...errors({ ...common, ...lockErrors, 405: 'A collection is at this path (`method_not_allowed`).', 409: 'The parent collection does not exist (`not_a_directory`).', 413: 'Over --max-upload-size (`too_large`).', 507: 'No space left, or over the quota.' }),
    },
  },
  DELETE: {
    summary: 'Delete a file or a collection',
    headers: { type: 'object', properties: lockHeaders },
    response: { 204: empty('Deleted.'), ...errors({ ...common, ...lockErrors, 403: 'The root of your tree (`forbidden`).', 404: 'Nothing at this path (`not_found`).' }) },
  },
  PROPFIND: {
    summary: 'Properties of a resource and, with Depth: 1, its members',
    headers: { type: 'object', properties: { depth: { type: 'string', enum: ['0', '1', 'infinity'], description: '`infinity` is refused (403 `propfind-finite-depth`).' } } },
    body: xmlBody('A `propfind` (prop, propname or allprop); empty means allprop.'),
    response: {
      207: XML('Multistatus.'),
      ...errors({ ...common, 403: '`Depth: infinity` (`propfind_finite_depth`).', 404: 'Nothing at this path (`not_found`).', 412: lockErrors[412], 413: 'The XML body is too large.' }),
    },
  },
  PROPPATCH: {
    summary: 'Set or remove dead properties (kept in the database)',
    headers: { type: 'object', properties: lockHeaders },
    body: { required: true, content: { 'application/xml': { schema: { type: 'string', contentMediaType: 'application/xml' } } } },
    response: { 207: XML('Multistatus, one status per property.'), ...errors({ ...common, ...lockErrors, 403: 'A protected (live) property.', 404: 'Nothing at this path.', 413: 'The XML body is too large.', 507: 'Over your dead-property limits (`dav_limit_reached`); nothing changed.' }) },
  },
  MKCOL: {
    summary: 'Create a collection (folder)',
    headers: { type: 'object', properties: lockHeaders },
    response: {
      201: empty('Created.'),
      ...errors({ ...common, ...lockErrors, 405: 'Something already exists at this path (`method_not_allowed`).', 409: 'The parent does not exist.', 415: 'MKCOL with a body (`unsupported_media_type`).' }),
    },
  },
  COPY: {
    summary: 'Copy a resource within your tree',
    headers: {
      type: 'object',
      required: ['destination'],
      properties: { destination: { type: 'string', description: 'A URL under /dav/<you>/.' }, overwrite: { type: 'string', enum: ['T', 'F'] }, depth: { type: 'string', enum: ['0', 'infinity'] }, ...lockHeaders },
    },
    response: {
      201: empty('Copied to a new resource.'),
      204: empty('Copied over an existing resource.'),
      ...errors({ ...common, ...lockErrors, 403: 'A Destination outside your tree, or the source itself (`forbidden`).', 404: 'Nothing at this path.', 409: 'The destination\'s parent does not exist.', 507: 'No space left, over the quota, or the copied dead properties over your limits (`dav_limit_reached`).' }),
    },
  },
  MOVE: {
    summary: 'Move or rename a resource within your tree',
    headers: {
      type: 'object',
      required: ['destination'],
      properties: { destination: { type: 'string', description: 'A URL under /dav/<you>/.' }, overwrite: { type: 'string', enum: ['T', 'F'] }, ...lockHeaders },
    },
    response: {
      201: empty('Moved to a new name.'),
      204: empty('Moved over an existing resource.'),
      ...errors({ ...common, ...lockErrors, 403: 'A Destination outside your tree, the root, or into itself (`forbidden`).', 404: 'Nothing at this path.', 409: 'The destination\'s parent does not exist.' }),
    },
  },
  LOCK: {
    summary: 'Lock a resource (exclusive or shared write lock), or refresh a lock',
    headers: { type: 'object', properties: { timeout: { type: 'string', description: '`Second-<n>` or `Infinite` (capped).' }, depth: { type: 'string', enum: ['0', 'infinity'] }, ...lockHeaders } },
    body: xmlBody('A `lockinfo`; empty to refresh the lock named in `If`.'),
    response: {
      200: XML('Locked (or refreshed): the lock discovery.', { 'lock-token': responseHeader('`<urn:uuid:…>` of a new lock.') }),
      201: XML('An unmapped URL was locked: an empty file was created.', { 'lock-token': responseHeader('`<urn:uuid:…>`.') }),
      ...errors({ ...common, ...lockErrors, 409: 'The parent collection does not exist.', 507: 'You hold as many locks as you may (`dav_limit_reached`).' }),
    },
  },
  UNLOCK: {
    summary: 'Remove a lock',
    headers: { type: 'object', required: ['lock-token'], properties: { 'lock-token': { type: 'string', description: '`<urn:uuid:…>`.' } } },
    response: { 204: empty('Unlocked.'), ...errors({ ...common, 409: 'No lock with this token on the resource (`lock_token_mismatch`).' }) },
  },
  POST: {
    summary: 'Not a WebDAV method here: 405 with Allow',
    response: errors({ ...common, 405: `\`method_not_allowed\`, with \`Allow: ${ALLOW}\`.` }),
  },
  PATCH: {
    summary: 'Not a WebDAV method here: 405 with Allow',
    response: errors({ ...common, 405: `\`method_not_allowed\`, with \`Allow: ${ALLOW}\`.` }),
  },
};

/** The schema of one method on /dav/* or /dav (the top: PROPFIND and OPTIONS only, the rest 405). */
function davSchema(method: string, underUser: boolean): RouteSchema {
  const m = DAV_METHODS[method];
  if (!m) throw new Error(`no WebDAV schema for ${method}`);
  const base = { ...m, tags: DAV_TAG, ...(method === 'OPTIONS' ? { security: [] } : { security: credentials }) };
  if (underUser) return { ...base, params: davPath };
  if (method === 'OPTIONS') return base;
  if (method === 'PROPFIND') return { ...base, summary: 'The top: your own root collection only' };
  return { ...base, summary: 'Only PROPFIND and OPTIONS apply to /dav: 405 with Allow', response: errors({ ...common, 405: '`method_not_allowed`, with `Allow: OPTIONS, PROPFIND`.' }) };
}
