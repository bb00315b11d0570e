import { ErrorBody, type JsonSchema, type ResponseSpec, type RouteSchema } from './schemas.js';

/**
 * The OpenAPI 3.1 document of the server, built from the routes as Fastify
 * registered them (src/app/route-table.ts collects them with onRoute), and
 * the completeness rules a route's schema must meet. Pure: routes in,
 * document or problems out.
 */

/** One registered route, as the onRoute hook saw it. */
export type RouteRecord = {
  readonly methods: readonly string[];
  /** The full URL pattern, base path included (`/fc/storage/*`). */
  readonly url: string;
  readonly schema: RouteSchema | undefined;
  /** The route's `config.auth`: credential kinds it accepts; undefined = public (or authenticated by its own hook). */
  readonly auth: readonly string[] | undefined;
  /** `config.hideOnAuthFailure`: a failed credential answers 404 instead of 401. */
  readonly hideOnAuthFailure: boolean;
};

export type DocumentOptions = {
  readonly basePath: string;
  readonly version: string;
  readonly components: { readonly [name: string]: JsonSchema };
  /** Answers every route may give (ANY_ROUTE in src/http/schemas.ts), added where a route does not list the status. */
  readonly anyRoute?: { readonly [status: string]: ResponseSpec };
};

/** OpenAPI security schemes, and which one each `config.auth` kind stands for. */
export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token from POST /auth/login (or /auth/refresh). A bare token without "Bearer " is accepted too.',
  },
  pathToken: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'A path token from the MakePathToken action: GET/HEAD of exactly that storage path only.',
  },
  basicAuth: {
    type: 'http',
    scheme: 'basic',
    description: 'WebDAV: the account name with its password (or an app password); a Bearer token works too.',
  },
  shareCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'fc_share',
    description: 'Set by POST /share/<id>/auth (or the password form of /s/<id>/) for a password-protected share link.',
  },
  basicSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'fc_basic',
    description: 'The session cookie of the basic HTML version, set by POST /basic/login.',
  },
} as const;

/**
 * Credential kind (from `config.auth`, or `config.access` via src/app/route-table.ts) → security scheme.
 * API keys (app passwords) are bearer tokens too, and WebDAV Basic passwords.
 */
export const AUTH_SCHEMES: { readonly [kind: string]: keyof typeof SECURITY_SCHEMES } = {
  user: 'bearerAuth',
  admin: 'bearerAuth',
  session: 'bearerAuth',
  apiKey: 'bearerAuth',
  pathToken: 'pathToken',
  basic: 'basicAuth',
  share: 'shareCookie',
  cookie: 'basicSession',
};

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND']);

/**
 * Answers a route gives because of the credentials it declares, whether or not its schema lists
 * them: the refusal of a missing or bad credential (401, or 404 for a private URL), 403 for a
 * non-admin on an admin route, 403 for an app password on a session-only route, and 403 for a
 * read-only app password on a route that writes.
 * The document adds them where the schema does not list the status; the answer check accepts them.
 */
export function credentialAnswers(route: Pick<RouteRecord, 'auth' | 'hideOnAuthFailure'>, method: string): { [status: string]: ResponseSpec } {
  const kinds = route.auth ?? [];
  const signedIn = kinds.some((k) => k === 'user' || k === 'admin' || k === 'session' || k === 'apiKey');
  const out: { [status: string]: ResponseSpec } = {};
  const error = (description: string): ResponseSpec => ({ description, content: { 'application/json': { schema: ErrorBody } } });
  if (signedIn) {
    out[route.hideOnAuthFailure ? '404' : '401'] = error(
      route.hideOnAuthFailure ? 'No valid credential: this address does not exist for you (`not_found`).' : 'No valid credential (`unauthorized`).',
    );
  }
  const forbidden: string[] = [];
  if (kinds.includes('admin')) forbidden.push('the account is not an admin');
  if (kinds.includes('session')) forbidden.push('an app password cannot do this, it needs a signed-in session');
  if (signedIn && !READ_METHODS.has(method.toUpperCase())) forbidden.push('a read-only app password cannot change anything');
  if (forbidden.length) out['403'] = error(`Signed in but not allowed: ${forbidden.join('; ')} (\`forbidden\`).`);
  return out;
}

/** Methods an OpenAPI 3.1 Path Item holds; others (WebDAV's) go under `x-additionalOperations`, as OpenAPI 3.2's additionalOperations. */
export const STANDARD_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `/storage/*` → `/storage/{path}`, `/tus/:id` → `/tus/{id}`, with the base path removed. */
export function openApiPath(url: string, basePath: string): string {
  const rest = basePath && (url === basePath || url.startsWith(`${basePath}/`)) ? url.slice(basePath.length) : url;
  const path = rest
    .split('/')
    .map((seg) => (seg === '*' ? '{path}' : seg.replace(/^:([A-Za-z0-9_]+)(\(.*\))?$/, '{$1}')))
    .join('/');
  return path === '' ? '/' : path;
}

/** The path parameters of a Fastify URL pattern, by their Fastify names (`*` for a wildcard). */
export function pathParams(url: string): string[] {
  const out: string[] = [];
  for (const seg of url.split('/')) {
    if (seg === '*') out.push('*');
    else if (seg.startsWith(':')) out.push(seg.slice(1).replace(/\(.*\)$/, ''));
  }
  return out;
}

const docName = (param: string) => (param === '*' ? 'path' : param);

const properties = (schema: JsonSchema | undefined): Record<string, JsonSchema> => (schema?.properties ?? {}) as Record<string, JsonSchema>;
const requiredOf = (schema: JsonSchema | undefined): readonly string[] => (Array.isArray(schema?.required) ? (schema.required as string[]) : []);

/** OpenAPI ignores these as header parameters; they are described by security schemes and request bodies. */
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

function isContentBody(body: NonNullable<RouteSchema['body']>): body is { content: Record<string, { schema: JsonSchema }>; description?: string; required?: boolean } {
  return typeof body === 'object' && body !== null && 'content' in body && typeof body.content === 'object';
}

function hasJsonSchemaKeywords(s: object): boolean {
  return ['type', 'properties', '$ref', 'oneOf', 'anyOf', 'allOf', 'items', 'const', 'enum'].some((k) => k in s);
}

/** Subschemas identical (the same object) to a component become `$ref`s to it. */
function hoister(components: DocumentOptions['components']) {
  const names = new Map<unknown, string>();
  for (const [name, schema] of Object.entries(components)) names.set(schema, name);
  const walk = (node: unknown, top = false): unknown => {
    if (!top && names.has(node)) return { $ref: `#/components/schemas/${names.get(node)}` };
    if (Array.isArray(node)) return node.map((n) => walk(n));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = walk(v);
    return out;
  };
  return walk;
}

function responseObject(spec: ResponseSpec | JsonSchema, withBody: boolean): Record<string, unknown> {
  const s = spec as Record<string, unknown>;
  const description = typeof s.description === 'string' ? s.description : 'Answer.';
  const out: Record<string, unknown> = { description };
  if (s.headers && typeof s.headers === 'object') out.headers = s.headers;
  if (!withBody) return out;
  if (s.content && typeof s.content === 'object') out.content = s.content;
  else if (hasJsonSchemaKeywords(s)) out.content = { 'application/json': { schema: spec } };
  return out;
}

function securityOf(route: RouteRecord): unknown[] {
  if (route.schema?.security) return [...route.schema.security];
  if (!route.auth || route.auth.length === 0) return [];
  const schemes = [...new Set(route.auth.map((kind) => AUTH_SCHEMES[kind]).filter((s) => s !== undefined))];
  // A share link's id is itself the credential; its cookie only for a password link. The basic pages redirect to their sign-in.
  const optional = route.auth.every((k) => k === 'share' || k === 'cookie');
  return [...(optional ? [{}] : []), ...schemes.map((s) => ({ [s]: [] }))];
}

function operationIdFor(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((seg) => seg.replace(/^\{(.*)\}$/, 'by_$1').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, ''))
    .filter(Boolean);
  return [method.toLowerCase(), ...(words.length ? words : ['root'])].join('_');
}

function operation(route: RouteRecord, method: string, path: string, headOfGet: boolean, anyRoute: DocumentOptions['anyRoute'] = {}): Record<string, unknown> {
  const schema = route.schema as RouteSchema;
  const op: Record<string, unknown> = {
    summary: headOfGet ? `${schema.summary} (headers only)` : schema.summary,
    ...(schema.description ? { description: schema.description } : {}),
    tags: [...schema.tags],
    operationId: operationIdFor(method, path),
  };
  const parameters: Record<string, unknown>[] = [];
  const params = properties(schema.params);
  for (const name of pathParams(route.url)) {
    const p = params[name] ?? { type: 'string' };
    const { description, ...rest } = p as { description?: string };
    parameters.push({ name: docName(name), in: 'path', required: true, ...(description ? { description } : {}), schema: rest });
  }
  const query = schema.querystring;
  for (const [name, p] of Object.entries(properties(query))) {
    const { description, ...rest } = p as { description?: string };
    parameters.push({ name, in: 'query', required: requiredOf(query).includes(name), ...(description ? { description } : {}), schema: rest });
  }
  const headers = schema.headers;
  for (const [name, p] of Object.entries(properties(headers))) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) continue;
    const { description, ...rest } = p as { description?: string };
    parameters.push({ name, in: 'header', required: requiredOf(headers).includes(name), ...(description ? { description } : {}), schema: rest });
  }
  if (parameters.length) op.parameters = parameters;
  if (schema.body !== undefined) {
    const body = schema.body;
    op.requestBody = isContentBody(body)
      ? { required: body.required ?? true, ...(body.description ? { description: body.description } : {}), content: body.content }
      : { required: true, content: { 'application/json': { schema: body } } };
  }
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(schema.response ?? {})) responses[status] = responseObject(spec, method !== 'HEAD');
  for (const [status, spec] of Object.entries({ ...credentialAnswers(route, method), ...anyRoute })) if (!(status in responses)) responses[status] = responseObject(spec, method !== 'HEAD');
  // Status order, whatever order the schema and the common answers came in.
  op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  op.security = securityOf(route);
  return op;
}

/** The OpenAPI 3.1 document of these routes. Routes without a schema or with `hide` are left out (see schemaProblems). */
export function openApiDocument(routes: readonly RouteRecord[], opts: DocumentOptions): Record<string, unknown> {
  const hoist = hoister(opts.components);
  const getSchemas = new Set(routes.filter((r) => r.methods.includes('GET')).map((r) => r.schema));
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  for (const route of routes) {
    if (!route.schema || route.schema.hide) continue;
    const path = openApiPath(route.url, opts.basePath);
    const item = (paths[path] ??= {});
    for (const method of route.methods) {
      const op = operation(route, method, path, method === 'HEAD' && getSchemas.has(route.schema), opts.anyRoute);
      // One operationId per operation, whatever the schema says: several methods may share one schema.
      let id = route.schema.operationId && route.methods.length === 1 ? route.schema.operationId : (op.operationId as string);
      while (ids.has(id)) id = `${id}_${method.toLowerCase()}`;
      ids.add(id);
      op.operationId = id;
      const m = method.toLowerCase();
      if (STANDARD_METHODS.has(m)) item[m] = hoist(op);
      else ((item['x-additionalOperations'] ??= {}) as Record<string, unknown>)[method] = hoist(op);
    }
  }
  const sorted: Record<string, unknown> = {};
  for (const p of Object.keys(paths).sort()) sorted[p] = paths[p];
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(opts.components)) schemas[name] = hoist(schema, true);
  return {
    openapi: '3.1.0',
    info: {
      title: 'File Cloud',
      version: opts.version,
      description: 'The HTTP API of File Cloud, generated from the route schemas of this server. Errors: every 4xx/5xx answer to a non-HEAD request has the body #/components/schemas/Error. WebDAV methods that OpenAPI 3.1 has no field for are under each path item\'s x-additionalOperations.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: opts.basePath || '/', description: opts.basePath ? 'This server, under its --base-path.' : 'This server.' }],
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    paths: sorted,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}

/** Every operation of a document as `METHOD /path`, additional (WebDAV) operations included. */
export function documentOperations(doc: { paths?: Record<string, Record<string, unknown>> }): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const key of Object.keys(item)) if (STANDARD_METHODS.has(key)) out.push(`${key.toUpperCase()} ${path}`);
    for (const method of Object.keys((item['x-additionalOperations'] ?? {}) as object)) out.push(`${method} ${path}`);
  }
  return out.sort();
}

/**
 * What each route's schema lacks, one line per problem, naming the route:
 * the completeness rule every route of the server must meet (test/routes/openapi.test.ts).
 */
export function schemaProblems(routes: readonly RouteRecord[]): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    const label = `${route.methods.join('|')} ${route.url}`;
    const s = route.schema;
    const say = (what: string) => problems.push(`${label}: ${what}`);
    if (!s) {
      say('no schema (declare schema: { summary, tags, params/querystring/body, response: { <2xx>: …, …errors({4xx: …}) } }, see src/http/schemas.ts)');
      continue;
    }
    if (typeof s.summary !== 'string' || s.summary.trim() === '') say('no schema.summary');
    if (!Array.isArray(s.tags) || s.tags.length === 0) say('no schema.tags');
    const statuses = Object.keys(s.response ?? {});
    if (statuses.length === 0) say('no schema.response');
    else {
      // A route that exists only to refuse a method (405 with Allow) has no success answer to document.
      if (!statuses.some((st) => /^[23]/.test(st)) && !statuses.includes('405')) say('no success answer (2xx/3xx) in schema.response');
      if (!statuses.some((st) => /^[45]/.test(st))) say('no error answer (4xx/5xx) in schema.response (use errors({...}) from src/http/schemas.ts)');
      for (const st of statuses) {
        if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(st)) say(`schema.response key "${st}" is not a status code`);
        const spec = s.response[st] as { description?: unknown } | undefined;
        if (typeof spec?.description !== 'string' || spec.description === '') say(`schema.response[${st}] has no description`);
      }
    }
    const declared = properties(s.params);
    for (const name of pathParams(route.url)) if (!(name in declared)) say(`path parameter "${name}" is not described in schema.params.properties`);
    for (const kind of route.auth ?? []) if (!s.security && AUTH_SCHEMES[kind] === undefined) say(`config.auth kind "${kind}" has no security scheme (AUTH_SCHEMES in src/http/openapi.ts)`);
  }
  return problems;
}
