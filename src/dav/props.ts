import { AppError } from '../domain/errors.js';
import { contentTypeFor } from '../lib/mime.js';
import type { Entry } from '../storage/backend.js';
import type { DavLock } from '../store/dav-locks.js';
import type { DeadProperty } from '../store/dav-properties.js';
import { children, escapeText, type XmlElement } from './xml.js';

export const DAV_NS = 'DAV:';

export type PropName = { readonly ns: string; readonly local: string };

/** What a PROPFIND asks for (RFC 4918 §9.1, §14.20): no body means allprop. */
export type PropfindRequest =
  | { readonly kind: 'allprop'; readonly include: readonly PropName[] }
  | { readonly kind: 'propname' }
  | { readonly kind: 'prop'; readonly props: readonly PropName[] };

const badBody = (what: string) => new AppError('bad_request', `The request body is not a valid ${what} (RFC 4918).`);

export function parsePropfind(root: XmlElement | undefined): PropfindRequest {
  if (!root) return { kind: 'allprop', include: [] };
  if (root.ns !== DAV_NS || root.local !== 'propfind') throw badBody('DAV:propfind element');
  const kinds = root.children.filter((c) => c.ns === DAV_NS && (c.local === 'allprop' || c.local === 'propname' || c.local === 'prop'));
  const include = root.children.find((c) => c.ns === DAV_NS && c.local === 'include');
  const first = kinds[0];
  if (!first || kinds.length > 1) throw badBody('DAV:propfind (it needs exactly one of allprop, propname or prop)');
  if (first.local === 'propname') return { kind: 'propname' };
  if (first.local === 'allprop') return { kind: 'allprop', include: include ? include.children.map(nameOf) : [] };
  return { kind: 'prop', props: first.children.map(nameOf) };
}

const nameOf = (el: XmlElement): PropName => ({ ns: el.ns, local: el.local });

/** The `set` and `remove` instructions of a PROPPATCH, in document order (RFC 4918 §9.2: applied in order, all or none). */
export type PropPatch = { readonly op: 'set'; readonly el: XmlElement } | { readonly op: 'remove'; readonly name: PropName };

export function parsePropertyUpdate(root: XmlElement | undefined): PropPatch[] {
  if (!root || root.ns !== DAV_NS || root.local !== 'propertyupdate') throw badBody('DAV:propertyupdate element');
  const patches: PropPatch[] = [];
  for (const instruction of root.children) {
    if (instruction.ns !== DAV_NS || (instruction.local !== 'set' && instruction.local !== 'remove')) continue;
    for (const prop of children(instruction, DAV_NS, 'prop')) {
      for (const el of prop.children) patches.push(instruction.local === 'set' ? { op: 'set', el } : { op: 'remove', name: nameOf(el) });
    }
  }
  if (patches.length === 0) throw badBody('DAV:propertyupdate (it sets or removes no property)');
  return patches;
}

/** Everything a live property's value is computed from. */
export type Resource = {
  readonly href: string;
  readonly name: string;
  readonly entry: Entry;
  /** Live locks that apply to the resource (for lockdiscovery). */
  readonly locks: readonly DavLock[];
  readonly dead: readonly DeadProperty[];
  /** RFC 4331, when known (asked for by name only). */
  readonly quota?: { readonly used: number; readonly available?: number };
  /** The time lock timeouts count down from. */
  readonly now: number;
};

const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

/** Live properties we compute; none can be set by PROPPATCH. Those in allprop are marked. */
export const LIVE: Readonly<Record<string, { allprop: boolean; value(r: Resource, lockroot: (l: DavLock) => string): string | undefined }>> = {
  resourcetype: { allprop: true, value: (r) => (r.entry.isFile ? '' : '<D:collection/>') },
  displayname: { allprop: true, value: (r) => escapeText(r.name) },
  getcontentlength: { allprop: true, value: (r) => (r.entry.isFile ? String(r.entry.size) : undefined) },
  getcontenttype: { allprop: true, value: (r) => (r.entry.isFile ? escapeText(contentTypeFor(r.entry.name)) : undefined) },
  getetag: { allprop: true, value: (r) => escapeText(r.entry.etag) },
  getlastmodified: { allprop: true, value: (r) => r.entry.modified.toUTCString() },
  // No backend records a creation time; the last change is the closest honest figure.
  creationdate: { allprop: true, value: (r) => r.entry.modified.toISOString() },
  supportedlock: { allprop: true, value: () => SUPPORTED_LOCK },
  lockdiscovery: { allprop: true, value: (r, lockroot) => r.locks.map((l) => activeLock(l, lockroot(l), r.now)).join('') },
  'quota-used-bytes': { allprop: false, value: (r) => (r.quota ? String(r.quota.used) : undefined) },
  'quota-available-bytes': { allprop: false, value: (r) => (r.quota?.available !== undefined ? String(r.quota.available) : undefined) },
};

export const isLiveProperty = (p: PropName): boolean => p.ns === DAV_NS && Object.hasOwn(LIVE, p.local);

/** Live properties a request names explicitly that need more than the entry (so the route fetches them only then). */
export function wants(req: PropfindRequest, local: string): boolean {
  if (req.kind === 'prop') return req.props.some((p) => p.ns === DAV_NS && p.local === local);
  if (req.kind === 'allprop') return LIVE[local]?.allprop === true || req.include.some((p) => p.ns === DAV_NS && p.local === local);
  return false;
}

export const wantsDead = (req: PropfindRequest): boolean => req.kind !== 'prop' || req.props.some((p) => !isLiveProperty(p));

/** `<D:activelock>` of one lock (RFC 4918 §14.1). */
export function activeLock(lock: DavLock, lockrootHref: string, now: number): string {
  return (
    '<D:activelock>' +
    `<D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === 0 ? '0' : 'infinity'}</D:depth>` +
    lock.owner +
    `<D:timeout>Second-${Math.max(0, Math.round((lock.expiresAt - now) / 1000))}</D:timeout>` +
    `<D:locktoken><D:href>${escapeText(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeText(lockrootHref)}</D:href></D:lockroot>` +
    '</D:activelock>'
  );
}

/** An empty element naming a property, with its namespace declared (`xmlns=""` for none). */
export function emptyElement(p: PropName): string {
  if (p.ns === DAV_NS) return `<D:${p.local}/>`;
  return p.ns === '' ? `<${p.local} xmlns=""/>` : `<P:${p.local} xmlns:P="${escapeText(p.ns)}"/>`;
}

const STATUS: Record<number, string> = { 200: 'OK', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 424: 'Failed Dependency', 507: 'Insufficient Storage' };
export const statusLine = (code: number) => `<D:status>HTTP/1.1 ${code} ${STATUS[code] ?? ''}</D:status>`;

function propstat(code: number, inner: string): string {
  return `<D:propstat><D:prop>${inner}</D:prop>${statusLine(code)}</D:propstat>`;
}

/** Renders one `<D:response>` of a PROPFIND multistatus. */
export type PropfindRenderer = (r: Resource) => string;

/**
 * What a PROPFIND asks for is worked out once per request, not once per
 * resource: a Depth-1 PROPFIND of a big folder renders thousands of
 * responses, and this loop is most of its cost.
 */
export function propfindRenderer(req: PropfindRequest, lockroot: (l: DavLock) => string): PropfindRenderer {
  const response = (r: Resource, found: string, missing: string) =>
    `<D:response><D:href>${escapeText(r.href)}</D:href>${found || !missing ? propstat(200, found) : ''}${missing ? propstat(404, missing) : ''}</D:response>`;
  if (req.kind === 'propname') {
    const names = Object.entries(LIVE).filter(([, spec]) => spec.allprop);
    return (r) => {
      let found = '';
      for (const [local, spec] of names) if (spec.value(r, lockroot) !== undefined) found += `<D:${local}/>`;
      for (const d of r.dead) found += emptyElement({ ns: d.ns, local: d.name });
      return response(r, found, '');
    };
  }
  if (req.kind === 'allprop' && req.include.length === 0) {
    return (r) => {
      let found = allLive(r, lockroot);
      for (const d of r.dead) found += d.xml;
      return response(r, found, '');
    };
  }
  if (req.kind === 'allprop') {
    const fields = Object.entries(LIVE).filter(([local, spec]) => spec.allprop || req.include.some((p) => p.ns === DAV_NS && p.local === local));
    return (r) => {
      let found = '';
      for (const [local, spec] of fields) {
        const v = spec.value(r, lockroot);
        if (v !== undefined) found += `<D:${local}>${v}</D:${local}>`;
      }
      for (const d of r.dead) found += d.xml;
      return response(r, found, '');
    };
  }
  const asked = req.props.map((p) => ({ p, live: isLiveProperty(p) ? LIVE[p.local] : undefined, empty: emptyElement(p) }));
  return (r) => {
    let found = '';
    let missing = '';
    for (const { p, live, empty } of asked) {
      if (live) {
        const v = live.value(r, lockroot);
        if (v === undefined) missing += empty;
        else found += `<D:${p.local}>${v}</D:${p.local}>`;
        continue;
      }
      const d = r.dead.find((x) => x.ns === p.ns && x.name === p.local);
      if (d) found += d.xml;
      else missing += empty;
    }
    return response(r, found, missing);
  };
}

/**
 * Every allprop live property of LIVE, in its order, in one template: a
 * body-less PROPFIND (cadaver, litmus, many scripts) of a big folder renders
 * this for each member, and one template is about twice as fast as calling
 * each LIVE entry. props.test.ts holds the two equal.
 */
export function allLive(r: Resource, lockroot: (l: DavLock) => string): string {
  const e = r.entry;
  const locks = r.locks.length === 0 ? '' : r.locks.map((l) => activeLock(l, lockroot(l), r.now)).join('');
  const fileOnly = e.isFile ? `<D:getcontentlength>${e.size}</D:getcontentlength><D:getcontenttype>${escapeText(contentTypeFor(e.name))}</D:getcontenttype>` : '';
  return (
    `<D:resourcetype>${e.isFile ? '' : '<D:collection/>'}</D:resourcetype><D:displayname>${escapeText(r.name)}</D:displayname>${fileOnly}` +
    `<D:getetag>${escapeText(e.etag)}</D:getetag><D:getlastmodified>${e.modified.toUTCString()}</D:getlastmodified><D:creationdate>${e.modified.toISOString()}</D:creationdate>` +
    `<D:supportedlock>${SUPPORTED_LOCK}</D:supportedlock><D:lockdiscovery>${locks}</D:lockdiscovery>`
  );
}

/** One `<D:response>` of a PROPFIND multistatus for a resource. */
export const propfindResponse = (req: PropfindRequest, r: Resource, lockroot: (l: DavLock) => string): string => propfindRenderer(req, lockroot)(r);

export const MULTISTATUS_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">';
export const MULTISTATUS_CLOSE = '</D:multistatus>\n';

/**
 * The propstats of a PROPPATCH answer: all or nothing (RFC 4918 §9.2), so one protected (live) property
 * fails the whole request with 403 and the others with 424; else every property 200.
 */
export function proppatchPropstats(names: readonly PropName[]): string {
  if (!names.some(isLiveProperty)) return `<D:propstat><D:prop>${names.map(emptyElement).join('')}</D:prop>${statusLine(200)}</D:propstat>`;
  const forbidden = names.filter(isLiveProperty).map(emptyElement).join('');
  const dependent = names.filter((n) => !isLiveProperty(n)).map(emptyElement).join('');
  return `<D:propstat><D:prop>${forbidden}</D:prop>${statusLine(403)}</D:propstat>` + (dependent ? `<D:propstat><D:prop>${dependent}</D:prop>${statusLine(424)}</D:propstat>` : '');
}
