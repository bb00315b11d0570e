import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Span } from '@opentelemetry/api';

/**
 * OpenTelemetry tracing, loaded only when an OTLP endpoint is configured
 * (--otlp-endpoint / OTEL_EXPORTER_OTLP_ENDPOINT): buildApp imports this
 * module dynamically, and this module imports the SDK dynamically, so a
 * server without tracing loads none of it.
 *
 * One SERVER span per request, named `<METHOD> <route pattern>`, with the
 * method, route, status and request id. Never the raw URL: paths are
 * private and `?token=` is a credential. An incoming W3C `traceparent`
 * makes the span a child of the caller's trace.
 */
export type Tracing = { install(app: FastifyInstance): void; shutdown(): Promise<void> };

const SPAN = Symbol('fc.span');
type Traced = { [SPAN]?: Span };

export async function startTracing(opts: { endpoint: string; basePath: string; serviceVersion?: string }): Promise<Tracing> {
  const [api, sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${opts.endpoint}/v1/traces` });
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'file-cloud', ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}) }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: 2000 })],
  });
  const tracer = provider.getTracer('file-cloud');

  const routeOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === undefined) return 'unmatched';
    return opts.basePath && url.startsWith(opts.basePath) ? url.slice(opts.basePath.length) || '/' : url;
  };

  const parentOf = (header: unknown) => {
    // traceparent: version-traceid-spanid-flags (W3C Trace Context).
    const m = typeof header === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim()) : null;
    if (!m || /^0+$/.test(m[1] as string) || /^0+$/.test(m[2] as string)) return api.ROOT_CONTEXT;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: m[1] as string, spanId: m[2] as string, traceFlags: parseInt(m[3] as string, 16) & 1, isRemote: true });
  };

  return {
    install(app) {
      app.addHook('onRequest', async (request) => {
        const route = routeOf(request);
        (request as Traced)[SPAN] = tracer.startSpan(
          `${request.method} ${route}`,
          { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'file_cloud.request_id': request.id } },
          parentOf(request.headers.traceparent),
        );
      });
      app.addHook('onResponse', async (request, reply) => {
        const span = (request as Traced)[SPAN];
        if (!span) return;
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
      });
      // A client that goes away mid-request still ends its span.
      app.addHook('onRequestAbort', async (request) => {
        const span = (request as Traced)[SPAN];
        if (!span) return;
        span.setAttribute('file_cloud.aborted', true);
        span.end();
      });
    },
    shutdown: () => provider.shutdown(),
  };
}
