import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bytes, errors, type RouteSchema } from '../http/schemas.js';

const metricsSchema: RouteSchema = {
  summary: 'Prometheus metrics (only with --metrics)',
  description: 'No authentication: keep it reachable only from the monitoring network (docs/operations.md). Labels are route patterns, never raw URLs.',
  tags: ['Meta'],
  response: { 200: bytes('Metrics in the Prometheus text format.', ['text/plain']), ...errors({ 400: 'Malformed request (no Host header, a bad URL).' }) },
};

/**
 * Prometheus metrics (--metrics). Labels are the route *pattern*
 * (`/storage/*`, `/auth/login`, `unmatched`), the method and the status,
 * never a raw URL: user paths and tokens must not become label values
 * (unbounded cardinality, and they are private). One registry per app, so
 * tests can build several apps in one process.
 */
export type Metrics = {
  readonly registry: Registry;
  install(app: FastifyInstance): void;
  route(scope: FastifyInstance): void;
  /** Counts an upload (PUT to storage) being received before Fastify (the fast write path, src/app/fast-write.ts) in the gauge. */
  upload(req: IncomingMessage): void;
  /** Counts one answered exchange that Fastify did not see (the fast read path, src/app/fast-read.ts). */
  count(exchange: Exchange): void;
  /** Reports this process's change streams from `read` at each scrape. */
  changeStreams(read: () => { readonly open: number; readonly wakeups: number }): void;
};

/** One answered request: `route` is the pattern below the base path, `seconds` from receipt to the end of the answer. */
export type Exchange = { readonly method: string; readonly route: string; readonly status: number; readonly seconds: number; readonly socket: Socket };

const WATCHED = Symbol('fc.metrics');
/** Marks a request already in the uploads gauge (taken by the fast write path, then maybe handed on to Fastify). */
const RECEIVING = Symbol('fc.metrics.receiving');
type Watched = { [WATCHED]?: { start: bigint } };

export function createMetrics(opts: { basePath: string }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'file_cloud_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'file_cloud_http_request_duration_seconds',
    help: 'Time from request received to response finished, by method, route pattern and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const bytesIn = new Counter({ name: 'file_cloud_http_received_bytes_total', help: 'Bytes read from clients (request line, headers and bodies).', labelNames: ['route'], registers: [registry] });
  const bytesOut = new Counter({ name: 'file_cloud_http_sent_bytes_total', help: 'Bytes written to clients (status line, headers and bodies).', labelNames: ['route'], registers: [registry] });
  const uploads = new Gauge({ name: 'file_cloud_uploads_in_flight', help: 'Uploads (PUT to storage) currently being received.', registers: [registry] });
  /** One upload in the gauge until its exchange ends; 'close' fires however it ends (answered, aborted, reset), so the gauge never leaks. */
  const receiving = (raw: IncomingMessage & { [RECEIVING]?: true }) => {
    if (raw[RECEIVING]) return;
    raw[RECEIVING] = true;
    uploads.inc();
    raw.once('close', () => uploads.dec());
  };
  const loginFailures = new Counter({ name: 'file_cloud_login_failures_total', help: 'Logins refused for a wrong username or password.', registers: [registry] });
  const loginThrottled = new Counter({ name: 'file_cloud_login_throttled_total', help: 'Login attempts refused by the per-address throttle (429).', registers: [registry] });

  const routeOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === undefined) return 'unmatched';
    return opts.basePath && url.startsWith(opts.basePath) ? url.slice(opts.basePath.length) || '/' : url;
  };

  const seen = new WeakMap<object, { read: number; written: number }>();
  function count({ method, route, status, seconds, socket }: Exchange): void {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    duration.observe(labels, seconds);
    // Per-socket deltas since the previous exchange on the connection: HTTP/1.1 carries one
    // exchange at a time, and a body may be read ahead before onRequest runs.
    const last = seen.get(socket) ?? { read: 0, written: 0 };
    bytesIn.inc({ route }, Math.max(0, socket.bytesRead - last.read));
    bytesOut.inc({ route }, Math.max(0, socket.bytesWritten - last.written));
    seen.set(socket, { read: socket.bytesRead, written: socket.bytesWritten });
    if (route === '/auth/login' && method === 'POST') {
      if (status === 401) loginFailures.inc();
      else if (status === 429) loginThrottled.inc();
    }
  }

  return {
    registry,
    count,
    changeStreams(read) {
      new Gauge({ name: 'file_cloud_change_streams_open', help: 'Change streams (GET /api/changes/stream) open in this process.', registers: [registry], collect() {
        this.set(read().open);
      } });
      new Counter({ name: 'file_cloud_change_stream_wakeups_total', help: 'Times a change stream of this process was woken to read the journal.', registers: [registry], collect() {
        this.reset();
        this.inc(read().wakeups);
      } });
    },
    upload: receiving,
    install(app) {
      app.addHook('onRequest', async (request) => {
        (request as Watched)[WATCHED] = { start: process.hrtime.bigint() };
        if (request.method === 'PUT' && routeOf(request) === '/storage/*') receiving(request.raw);
      });
      app.addHook('onResponse', async (request, reply) => {
        const w = (request as Watched)[WATCHED];
        if (!w) return;
        count({ method: request.method, route: routeOf(request), status: reply.statusCode, seconds: Number(process.hrtime.bigint() - w.start) / 1e9, socket: request.raw.socket });
      });
    },
    route(scope) {
      // Public like /api/health: operators keep it from the outside at the proxy (docs/operations.md).
      scope.get('/metrics', { config: { access: { who: 'public' } }, schema: metricsSchema }, async (_request, reply) => {
        reply.header('cache-control', 'no-store').type(registry.contentType);
        return registry.metrics();
      });
    },
  };
}
