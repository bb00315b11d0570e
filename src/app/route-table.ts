import type { FastifyInstance } from 'fastify';
import type { RouteRecord } from '../http/openapi.js';
import type { RouteSchema } from '../http/schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on this app with its schema, as onRoute saw it (the source of GET /api/openapi.json). */
    schemaTable: readonly RouteRecord[];
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

type RouteConfig = { auth?: unknown; access?: unknown; hideOnAuthFailure?: unknown } | undefined;

/**
 * The credential kinds a route declares, from either form: `config.auth` (a list of kinds:
 * `['user', 'pathToken']`) or `config.access` (the rule `{ who, pathToken?, basic?, hide? }` of the one
 * authorization model). A form this function does not know is passed on as one unknown kind, so the
 * completeness check names the route (teach this function the new form).
 */
export function authKinds(config: RouteConfig): readonly string[] | undefined {
  const access = config?.access as { who?: unknown; pathToken?: unknown; basic?: unknown; sessionOnly?: unknown } | undefined;
  if (access !== undefined && access !== null) {
    if (access.who === 'public') return undefined;
    if (typeof access.who !== 'string') return [`<config.access of an unknown form: ${JSON.stringify(access)?.slice(0, 80)}>`];
    // A session-only route (no app passwords) is the `session` kind: bearer tokens from a sign-in only.
    const who = access.who === 'user' && access.sessionOnly === true ? 'session' : access.who;
    return [who, ...(access.pathToken === true ? ['pathToken'] : []), ...(access.basic === true ? ['basic'] : [])];
  }
  const auth = config?.auth;
  if (auth === undefined || auth === null) return undefined;
  if (Array.isArray(auth)) return auth.map(String);
  const kinds = (auth as { kinds?: unknown }).kinds;
  if (Array.isArray(kinds)) return kinds.map(String);
  return [`<config.auth of an unknown form: ${JSON.stringify(auth)?.slice(0, 80)}>`];
}

/** A missing or bad credential answers 404 instead of 401 (`config.hideOnAuthFailure`, or `access.hide`). */
export const hidesOnAuthFailure = (config: RouteConfig): boolean =>
  config?.hideOnAuthFailure === true || (config?.access as { hide?: unknown } | undefined)?.hide === true;

export function installRouteTable(app: FastifyInstance, opts: { checkAnswer?: (answer: Answer) => void } = {}): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRoute', (r) => {
    routes.push({
      methods: [r.method].flat(),
      url: r.url,
      schema: r.schema as RouteSchema | undefined,
      auth: authKinds(r.config as RouteConfig),
      hideOnAuthFailure: hidesOnAuthFailure(r.config as RouteConfig),
    });
  });
  app.decorate('schemaTable', routes);
  const check = opts.checkAnswer;
  if (check) {
    app.addHook('onSend', async (request, reply, payload) => {
      const o = request.routeOptions;
      // Unmatched requests (the not-found handler) belong to no route.
      if (o.url === undefined) return payload;
      const route: RouteRecord = { methods: [request.method], url: o.url, schema: o.schema as RouteSchema | undefined, auth: authKinds(o.config as RouteConfig), hideOnAuthFailure: hidesOnAuthFailure(o.config as RouteConfig) };
      const type = reply.getHeader('content-type');
      check({ route, method: request.method, status: reply.statusCode, contentType: typeof type === 'string' ? type : undefined, text: typeof payload === 'string' ? payload : undefined });
      return payload;
    });
  }
  return routes;
}
