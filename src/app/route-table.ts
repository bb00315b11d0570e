import type { FastifyInstance } from 'fastify';
import type { RouteRecord } from '../http/openapi.js';
import type { RouteSchema } from '../routes/schemas.js';
import { isWriteMethod, type AccessRule } from '../domain/access.js';
import { errors } from '../routes/schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on this app, as onRoute saw it (the source of GET /api/openapi.json). */
    routeTable: readonly RouteRecord[];
  }
}

/**
 * Collects every route the app registers, and makes route schemas
 * documentation only. Call before any route is registered.
 *
 * Why documentation only: the handlers check their input themselves and
 * answer with the contract's codes and sentences (400 `invalid_json`,
 * `bad_request` "The field "x" is required.", …); Fastify's validation would
 * answer first with its own messages, and its default Ajv options coerce
 * types and remove properties. And fast-json-stringify, Fastify's serializer
 * for routes with a response schema, drops every property the schema does
 * not name. So the validator accepts everything and the serializer is plain
 * JSON.stringify: exactly what Fastify does for a route without a schema.
 * The route tests keep the schemas true instead (test/routes/openapi.test.ts).
 */
/** One answer as sent, with the route that sent it: for a check that the route's schema documents it (tests). */
export type Answer = {
  readonly route: RouteRecord;
  readonly method: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /** The serialized body when it is text (JSON, HTML), else undefined (streams, buffers, no body). */
  readonly text: string | undefined;
};

/**
 * The credential kinds a route accepts, for the document's security schemes: from its `config.access`
 * rule (src/domain/access.ts), or the older `config.auth` list of kinds. Undefined: a public route (or
 * one whose own pages handle sign-in, the /basic/ cookie). Any other form is passed on as one unknown
 * kind, so the completeness check names the route.
 */
export function authKinds(config: { access?: unknown; auth?: unknown } | undefined): readonly string[] | undefined {
  const access = config?.access as AccessRule | undefined;
  if (access) {
    if (access.who === 'public' || access.who === 'cookie') return undefined;
    if (access.who === 'share') return ['share'];
    if (access.who === 'user' || access.who === 'admin') return ['user', ...(access.pathToken ? ['pathToken'] : []), ...(access.basic ? ['basic'] : [])];
    return [`<config.access of an unknown form: ${JSON.stringify(access)?.slice(0, 80)}>`];
  }
  const auth = config?.auth;
  if (auth === undefined || auth === null) return undefined;
  if (Array.isArray(auth)) return auth.map(String);
  return [`<config.auth of an unknown form: ${JSON.stringify(auth)?.slice(0, 80)}>`];
}

/** Whether a missing or bad credential is answered 404 rather than 401. */
const hides = (config: { access?: AccessRule; hideOnAuthFailure?: boolean } | undefined): boolean => config?.access?.hide === true || config?.hideOnAuthFailure === true;

export function installRouteTable(app: FastifyInstance, opts: { checkAnswer?: (answer: Answer) => void } = {}): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRoute', (r) => {
    // The refusals of the one authorization check belong to every route it guards: documented here,
    // once, from the route's rule, rather than repeated in each schema.
    if (r.schema) r.schema = withRefusals(r.schema as RouteSchema, r.config?.access as AccessRule | undefined, [r.method].flat());
    routes.push({
      methods: [r.method].flat(),
      url: r.url,
      schema: r.schema as RouteSchema | undefined,
      auth: authKinds(r.config),
      hideOnAuthFailure: hides(r.config),
    });
  });
  app.decorate('routeTable', routes);
  const check = opts.checkAnswer;
  if (check) {
    app.addHook('onSend', async (request, reply, payload) => {
      const o = request.routeOptions;
      // Unmatched requests (the not-found handler) belong to no route.
      if (o.url === undefined) return payload;
      const route: RouteRecord = { methods: [request.method], url: o.url, schema: o.schema as RouteSchema | undefined, auth: authKinds(o.config), hideOnAuthFailure: hides(o.config) };
      const type = reply.getHeader('content-type');
      check({ route, method: request.method, status: reply.statusCode, contentType: typeof type === 'string' ? type : undefined, text: typeof payload === 'string' ? payload : undefined });
      return payload;
    });
  }
  return routes;
}

/**
 * A route's schema with the 403 answers its access rule can give (src/domain/access.ts `decide`) added
 * where the schema does not list 403 itself: admin-only routes, session-only routes, and writes, which a
 * read-only app password may not do.
 */
export function withRefusals(schema: RouteSchema, access: AccessRule | undefined, methods: readonly string[]): RouteSchema {
  if (!access || (access.who !== 'user' && access.who !== 'admin') || schema.response['403']) return schema;
  const why: string[] = [];
  if (access.who === 'admin') why.push('not an administrator');
  if (access.sessionOnly) why.push('an app password, where a signed-in session is needed');
  if (access.write ?? methods.some(isWriteMethod)) why.push('a read-only app password on a write');
  if (why.length === 0) return schema;
  return { ...schema, response: { ...schema.response, ...errors({ 403: `Signed in but not allowed (\`forbidden\`): ${why.join('; ')}.` }) } };
}
