import { bytes, empty, errors, fileAnswers, header as responseHeader, type JsonSchema, type ResponseSpec, type RouteSchema } from '../http/schemas.js';

/** Methods of WebDAV class 1 and 2 that /dav/ answers (CONTRACT "WebDAV"). */
export const METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'REPORT'] as const;
export const ALLOW = METHODS.join(', ');

// The OpenAPI schemas of /dav/ (documentation: src/http/schemas.ts).

const DAV_TAG = ['WebDAV'];
const XML = (description: string, headers?: ResponseSpec['headers']) => bytes(description, ['application/xml'], headers);
const xmlBody = (description: string): RouteSchema['body'] => ({ required: false, description, content: { 'application/xml': { schema: { type: 'string', contentMediaType: 'application/xml' } } } });
const davPath: JsonSchema = {
  type: 'object',
  properties: { '*': { type: 'string', description: '`<user>/<...path>`, the same tree as /storage/<user>/; empty (`/dav/`) is the top, where PROPFIND shows your own root and `Shared with me/`; `Shared with me/<name> (<owner>)/…` is an item shared with you.' } },
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
      ...errors({ ...common, ...lockErrors, 404: 'In `Shared with me/`: nothing of that name is shared with you (`not_found`).', 405: 'A collection is at this path (`method_not_allowed`).', 409: 'The parent collection does not exist (`not_a_directory`).', 413: 'Over --max-upload-size (`too_large`).', 507: 'No space left, or over the quota.' }),
    },
  },
  DELETE: {
    summary: 'Delete a file or a collection',
    headers: { type: 'object', properties: lockHeaders },
    response: { 204: empty('Deleted.'), ...errors({ ...common, ...lockErrors, 403: 'The root of your tree (`forbidden`).', 404: 'Nothing at this path (`not_found`).' }) },
  },
  REPORT: {
    summary: 'What changed in a collection since a sync token (RFC 6578 sync-collection)',
    headers: { type: 'object', properties: { depth: { type: 'string', enum: ['0'], description: 'Must be 0 when given.' } } },
    body: xmlBody('A `DAV:sync-collection` with `sync-token` (empty: everything), `sync-level` (`1` or `infinite`), `prop`, and optionally `limit`/`nresults` (RFC 6578 §3.7).'),
    response: {
      207: XML('Multistatus: changed members with the asked properties, removed ones with 404, and the next `sync-token`; when cut short (over `DAV:limit`, or 10,000 journal entries), the collection last with 507 and `DAV:number-of-matches-within-limits`: ask again with the token for the rest.'),
      ...errors({
        ...common,
        403: 'Not a sync-collection REPORT, a file instead of a collection (`forbidden`), or a sync token this server did not give or no longer keeps (`valid_sync_token`): sync again without one; a server run with `--changes off` (`supported_report`).',
        404: 'Nothing at this path (`not_found`).',
        413: 'The XML body is too large.',
        507: 'A first sync (no token) with more members than its `DAV:limit` (`number_of_matches_within_limits`): it cannot be cut short.',
      }),
    },
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
export function davSchema(method: string, underUser: boolean): RouteSchema {
  const m = DAV_METHODS[method];
  if (!m) throw new Error(`no WebDAV schema for ${method}`);
  const base = { ...m, tags: DAV_TAG, ...(method === 'OPTIONS' ? { security: [] } : { security: credentials }) };
  if (underUser) return { ...base, params: davPath };
  if (method === 'OPTIONS') return base;
  if (method === 'PROPFIND') return { ...base, summary: 'The top: your own root and Shared with me' };
  return { ...base, summary: 'Only PROPFIND and OPTIONS apply to /dav: 405 with Allow', response: errors({ ...common, 405: '`method_not_allowed`, with `Allow: OPTIONS, PROPFIND`.' }) };
}
