import type { FastifyInstance } from 'fastify';
import type { RouteRecord } from '../http/openapi.js';
import type { RouteSchema } from '../routes/schemas.js';

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
export function installRouteTable(app: FastifyInstance): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRoute', (r) => {
    routes.push({
      methods: [r.method].flat(),
      url: r.url,
      schema: r.schema as RouteSchema | undefined,
      auth: r.config?.auth,
      hideOnAuthFailure: r.config?.hideOnAuthFailure === true,
    });
  });
  app.decorate('routeTable', routes);
  return routes;
}
