import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { isRoot, keyName, type StorageKey } from '../domain/storage-path.js';
import type { Entry } from '../storage/backend.js';
import type { DavConditions, DavService } from '../services/dav.js';
import { davConditions, destinationKey } from '../dav/conditions.js';
import type { DavLock } from '../store/dav-locks.js';
import { DAV_ACCESS, type Resource as UrlTarget } from '../domain/access.js';
import { parseTimeout } from '../services/dav-locks.js';
import { DAV_PREFIX, encodeSegment, hrefFor, parseDavPath, rawDavPath, type DavTarget } from '../dav/paths.js';
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
  wants,
  wantsDead,
  proppatchPropstats,
  type Resource,
} from '../dav/props.js';
import { readXmlBody } from '../dav/request-body.js';
import { depthOf, finiteDepth, hasBody, header, lockTokenOf, overwriteOf } from '../dav/request-headers.js';
import { parseLockInfo } from '../dav/lock-info.js';
import { child, escapeText, inBatches, serializeElement } from '../dav/xml.js';
import { syncLimit } from '../dav/sync-limit.js';
import { serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import { ALLOW, davSchema, METHODS } from './dav-schemas.js';
import { SHARED_WITH_ME, type Hrefs, type SharedWithMe } from './dav-shared.js';
import type { Operations } from '../services/operations.js';
import type { DavSync } from '../services/dav-sync.js';

const XML_TYPE = 'application/xml; charset=utf-8';
const NONE: readonly never[] = [];

export type DavDeps = {
  readonly dav: DavService;
  /** `/dav/Shared with me/…`: the items shared with the caller (issue 29). */
  readonly shared: SharedWithMe;
  /** The one door: GET and HEAD answers (the storage API's serveFile, sendListing) read as the caller, and a place in `Shared with me` is asked of `decide` with its grant, as at `/dav/<owner>/…`. */
  readonly operations: Pick<Operations, 'may' | 'as'>;
  readonly basePath: string;
  /** REPORT sync-collection (RFC 6578) over the change feed. */
  readonly sync: DavSync;
};

/**
 * /dav/<user>/...: the same tree as /storage/<user>/ over WebDAV class 1
 * and 2 (RFC 4918). This module only translates: headers and XML in, the
 * WebDAV service's answers (src/services/dav.ts, which holds the rules on
 * locks, dead properties, COPY and MOVE) out as multistatus XML.
 */
export async function davRoutes(scope: FastifyInstance, deps: DavDeps): Promise<void> {
  const { dav, basePath, shared } = deps;
  const ownHrefs: Hrefs = (key, isCollection) => hrefFor(basePath, key, isCollection);

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
    const raw = rawDavPath(request.url, basePath) ?? '';
    // Shared with me names nobody's tree in the URL: its places are resolved for the caller (handler).
    if (shared.parse(raw)) return { kind: 'none' };
    const target = parseDavPath(raw);
    return target.kind === 'top' ? { kind: 'none' } : { kind: 'storage', key: target.key, trailingSlash: target.trailingSlash };
  };
  const targetOf = (request: FastifyRequest): DavTarget =>
    request.resource.kind === 'storage' ? { kind: 'entry', key: request.resource.key, trailingSlash: request.resource.trailingSlash } : { kind: 'top' };
  const signedIn = DAV_ACCESS;

  const options = async (_request: FastifyRequest, reply: FastifyReply) => reply.header('allow', ALLOW).header('content-length', '0').code(200).send();

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let target = targetOf(request);
    let hrefs = ownHrefs;
    const principal = request.principal as Principal;
    const at = shared.parse(rawDavPath(request.url, basePath) ?? '');
    if (at?.entry === undefined && at) {
      if (request.method === 'PROPFIND') return propfindShared(request, reply, principal);
      throw new AppError('method_not_allowed', `Only PROPFIND and OPTIONS apply to ${SHARED_WITH_ME}/ itself.`, { headers: { allow: 'OPTIONS, PROPFIND' } });
    }
    if (at?.entry !== undefined) {
      const place = await shared.resolve(principal, { entry: at.entry, rest: at.rest });
      await deps.operations.may(principal, place.key, request.method);
      target = { kind: 'entry', key: place.key, trailingSlash: place.trailingSlash };
      hrefs = place.hrefs;
    }
    if (target.kind === 'top') {
      if (request.method === 'PROPFIND') return propfindTop(request, reply, principal);
      throw new AppError('method_not_allowed', `Only PROPFIND and OPTIONS apply to ${basePath}${DAV_PREFIX}; your files are under ${basePath}${DAV_PREFIX}${principal.username}/.`, { headers: { allow: 'OPTIONS, PROPFIND' } });
    }
    const { key } = target;
    const cond = davConditions(header(request, 'if'), basePath);
    switch (request.method) {
      case 'GET':
      case 'HEAD':
        return get(request, reply, target, cond, request.method === 'GET');
      case 'PUT': {
        // Handed on by the fast write path after its write failed: the error is the answer (the body is spent).
        const learned = request.learnedBefore;
        if (learned && 'error' in learned) throw learned.error;
        // Finder sends chunked PUTs with the length in X-Expected-Entity-Length.
        const declared = Number(request.headers['content-length'] ?? request.headers['x-expected-entity-length']);
        const declaredSize = Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
        const { created, etag } = await dav.put(key, request.raw, { cond, principal, declaredSize });
        if (etag) reply.header('etag', etag);
        return reply.code(created ? 201 : 204).send();
      }
      case 'DELETE':
        await dav.delete(key, cond, principal);
        return reply.code(204).send();
      case 'MKCOL':
        if (hasBody(request)) {
          request.raw.resume();
          throw new AppError('unsupported_media_type', 'MKCOL takes no request body.');
        }
        await dav.mkcol(key, cond, principal);
        return reply.code(201).send();
      case 'PROPFIND':
        await dav.checkIf(cond, key);
        return propfind(request, reply, target, hrefs);
      case 'PROPPATCH':
        return proppatch(request, reply, key, cond, principal, hrefs);
      case 'REPORT':
        return report(request, reply, key, principal, hrefs);
      case 'COPY':
      case 'MOVE': {
        const overwrite = overwriteOf(request);
        const move = request.method === 'MOVE';
        const to = destinationKey(await shared.destination(principal, header(request, 'destination')), basePath);
        const { created } = await dav.copyOrMove(key, to, { depth: depthOf(request, 'infinity'), overwrite, move, cond, principal });
        return reply.code(created ? 201 : 204).send();
      }
      case 'LOCK':
        return lock(request, reply, key, cond, principal, hrefs);
      case 'UNLOCK':
        await dav.unlock(key, lockTokenOf(request), principal);
        return reply.code(204).send();
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

  async function get(request: FastifyRequest, reply: FastifyReply, target: Extract<DavTarget, { kind: 'entry' }>, cond: DavConditions, withBody: boolean) {
    const ops = deps.operations.as(request.principal as Principal);
    const entry = await dav.entryForRead(target.key, cond, ops.principal);
    if (!entry.isFile) {
      // A collection's GET is the storage API's JSON listing: one shape for both doors.
      // The owner's (or a grantee's) listing, as /storage/ gives it: with the sync fields.
      return sendListing(reply, ops, target.key, withBody, { sync: true });
    }
    if (target.trailingSlash) throw new AppError('not_found', 'No collection exists at this path.');
    return serveFile(request, reply, ops, target.key, entry, { download: false, withBody });
  }

  /** REPORT: only DAV:sync-collection (RFC 6578), on a collection, with Depth: 0. */
  async function report(request: FastifyRequest, reply: FastifyReply, key: StorageKey, principal: Principal, hrefs: Hrefs) {
    // The change feed below knows the caller's trees, not this key's rule: the layer answers for the key.
    await deps.operations.as(principal).may(key, 'REPORT');
    const depth = header(request, 'depth');
    if (depth !== undefined && depth.trim() !== '0') throw new AppError('bad_request', 'A sync-collection REPORT takes Depth: 0 (RFC 6578 §3.2).');
    const root = await readXmlBody(request);
    if (!root || root.ns !== DAV_NS || root.local !== 'sync-collection') throw new AppError('forbidden', 'The only REPORT supported is DAV:sync-collection (RFC 6578).');
    const level = child(root, DAV_NS, 'sync-level')?.text.trim();
    if (level !== '1' && level !== 'infinite') throw new AppError('bad_request', 'DAV:sync-level must be 1 or infinite.');
    const token = child(root, DAV_NS, 'sync-token')?.text.trim();
    const limit = syncLimit(root);
    const prop = child(root, DAV_NS, 'prop');
    const req = parsePropfind({ ns: DAV_NS, local: 'propfind', attrs: [], text: '', content: [], children: prop ? [prop] : [{ ns: DAV_NS, local: 'allprop', attrs: [], text: '', content: [], children: [] }] });
    const result = await deps.sync.sync(principal, key, { token, level, limit });
    const render = propfindRenderer(req, lockrootOf(hrefs));
    const now = Date.now();
    const parts = [MULTISTATUS_OPEN];
    for (const c of result.changed) {
      parts.push(render({ href: hrefs(c.key, !c.entry.isFile), name: keyName(c.key), entry: c.entry, locks: NONE, dead: NONE, now }));
    }
    for (const r of result.removed) parts.push(`<D:response><D:href>${escapeText(hrefs(r.key, !r.isFile))}</D:href>${statusLine(404)}</D:response>`);
    // RFC 6578 §3.6: a cut-short answer says so on the request-URI; the token continues from there.
    if (result.truncated) parts.push(`<D:response><D:href>${escapeText(hrefs(key, true))}</D:href>${statusLine(507)}<D:error><D:number-of-matches-within-limits/></D:error></D:response>`);
    parts.push(`<D:sync-token>${escapeText(result.token)}</D:sync-token>`, MULTISTATUS_CLOSE);
    return multistatus(reply, parts);
  }

  const lockrootOf = (hrefs: Hrefs) => (l: DavLock) => hrefs({ user: l.user, segments: l.path === '' ? [] : l.path.split('/') }, false);

  async function propfind(request: FastifyRequest, reply: FastifyReply, target: Extract<DavTarget, { kind: 'entry' }>, hrefs: Hrefs) {
    const depth = finiteDepth(request);
    const req = parsePropfind(await readXmlBody(request));
    const { key } = target;
    const found = await dav.propfind(key, request.principal as Principal, {
      withMembers: depth === '1',
      dead: wantsDead(req),
      locks: wants(req, 'lockdiscovery'),
      quota: wants(req, 'quota-used-bytes') || wants(req, 'quota-available-bytes'),
    });
    const { entry, members, path, dead, locks, quota, now } = found;
    if (entry.isFile && target.trailingSlash) throw new AppError('not_found', 'No collection exists at this path.');
    const render = propfindRenderer(req, lockrootOf(hrefs));
    const top = render({ href: hrefs(key, !entry.isFile), name: isRoot(key) ? key.user : keyName(key), entry, locks: locks(path), dead: dead.get(path) ?? [], quota, now });
    if (!members) return multistatus(reply, [MULTISTATUS_OPEN, top, MULTISTATUS_CLOSE]);
    // Members share the folder's href and path: only their own name is encoded per entry.
    const dirHref = hrefs(key, true);
    const dirPath = path === '' ? '' : `${path}/`;
    const member = (m: Entry) => {
      const p = dirPath + m.name;
      return render({ href: dirHref + encodeSegment(m.name) + (m.isFile ? '' : '/'), name: m.name, entry: m, locks: locks(p), dead: dead.get(p) ?? NONE, quota, now });
    };
    return reply.code(207).type(XML_TYPE).send(Readable.from(inBatches(MULTISTATUS_OPEN + top, members, member, MULTISTATUS_CLOSE), { objectMode: false }));
  }

  async function propfindTop(request: FastifyRequest, reply: FastifyReply, principal: Principal) {
    const depth = finiteDepth(request);
    const req = parsePropfind(await readXmlBody(request));
    const { key: own, entry: rootEntry, now } = await dav.ownRoot(principal);
    const top: Resource = { href: `${basePath}${DAV_PREFIX}`, name: 'dav', entry: { ...rootEntry, name: '' }, locks: [], dead: [], now };
    const parts = [MULTISTATUS_OPEN, propfindResponse(req, top, () => '')];
    if (depth === '1') {
      parts.push(propfindResponse(req, { href: hrefFor(basePath, own, true), name: own.user, entry: rootEntry, locks: [], dead: [], now }, () => ''));
      parts.push(propfindResponse(req, { href: shared.prefix, name: SHARED_WITH_ME, entry: { ...rootEntry, name: SHARED_WITH_ME }, locks: [], dead: [], now }, () => ''));
    }
    parts.push(MULTISTATUS_CLOSE);
    return multistatus(reply, parts);
  }

  /** `Shared with me/`: a collection of the received items, each at its `<name> (<owner>)`. */
  async function propfindShared(request: FastifyRequest, reply: FastifyReply, principal: Principal) {
    const depth = finiteDepth(request);
    const req = parsePropfind(await readXmlBody(request));
    const { entry: rootEntry, now } = await dav.ownRoot(principal);
    const parts = [MULTISTATUS_OPEN, propfindResponse(req, { href: shared.prefix, name: SHARED_WITH_ME, entry: { ...rootEntry, name: SHARED_WITH_ME }, locks: [], dead: [], now }, () => '')];
    for (const m of depth === '1' ? await shared.members(principal) : []) {
      const entry = await deps.operations.as(principal).stat(m.key).catch(() => undefined);
      if (entry) parts.push(propfindResponse(req, { href: m.href, name: m.name, entry: { ...entry, name: m.name }, locks: [], dead: [], now }, () => ''));
    }
    parts.push(MULTISTATUS_CLOSE);
    return multistatus(reply, parts);
  }

  async function proppatch(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: DavConditions, principal: Principal, hrefs: Hrefs) {
    const patches = parsePropertyUpdate(await readXmlBody(request));
    const names = patches.map((p) => (p.op === 'set' ? { ns: p.el.ns, local: p.el.local } : p.name));
    const anyProtected = names.some(isLiveProperty);
    const changes = patches.map((p) => (p.op === 'set' ? { op: 'set' as const, prop: { ns: p.el.ns, name: p.el.local, xml: serializeElement(p.el) } } : { op: 'remove' as const, ns: p.name.ns, name: p.name.local }));
    const entry = await dav.proppatch(key, changes, { anyProtected, cond, principal });
    return multistatus(reply, [MULTISTATUS_OPEN, `<D:response><D:href>${hrefs(key, !entry.isFile)}</D:href>${proppatchPropstats(names)}</D:response>`, MULTISTATUS_CLOSE]);
  }

  async function lock(request: FastifyRequest, reply: FastifyReply, key: StorageKey, cond: DavConditions, principal: Principal, hrefs: Hrefs) {
    const info = await readXmlBody(request);
    const timeoutSeconds = parseTimeout(header(request, 'timeout'));
    if (!info) {
      const { status, locks, now } = await dav.lock(key, { kind: 'refresh', timeoutSeconds }, cond, principal);
      return lockAnswer(reply, status, locks, now, hrefs);
    }
    const { scope, owner } = parseLockInfo(info);
    const depth = depthOf(request, 'infinity');
    if (depth === '1') throw new AppError('bad_request', 'LOCK takes Depth: 0 or infinity.');
    const { status, locks, now, created } = await dav.lock(key, { kind: 'new', scope, depth, owner, timeoutSeconds }, cond, principal);
    if (created) reply.header('lock-token', `<${created.token}>`);
    return lockAnswer(reply, status, locks, now, hrefs);
  }

  function lockAnswer(reply: FastifyReply, status: number, locks: readonly DavLock[], now: number, hrefs: Hrefs) {
    const lockroot = lockrootOf(hrefs);
    const body = `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${locks.map((l) => activeLock(l, lockroot(l), now)).join('')}</D:lockdiscovery></D:prop>\n`;
    return reply.code(status).type(XML_TYPE).send(body);
  }

  function multistatus(reply: FastifyReply, parts: string[]) {
    return reply.code(207).type(XML_TYPE).send(parts.join(''));
  }
}
