import { createServer, type Server } from 'node:http';

export type CollectedSpan = { name: string; kind: number; traceId: string; parentSpanId?: string; attributes: Record<string, unknown>; resource: Record<string, unknown> };

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
const value = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;
const attrs = (list: KeyValue[] = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

/**
 * A minimal OpenTelemetry collector: accepts OTLP/HTTP JSON on POST
 * /v1/traces (what @opentelemetry/exporter-trace-otlp-http sends) and keeps
 * the spans, so tests can prove what the server emits.
 */
export async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; contentTypes: string[]; waitFor(pred: (s: CollectedSpan[]) => boolean, ms?: number): Promise<void>; close(): Promise<void> }> {
  const spans: CollectedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: { name: string; kind: number; traceId: string; parentSpanId?: string; attributes?: KeyValue[] }[] }[] }[] };
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) spans.push({ name: s.name, kind: s.kind, traceId: s.traceId, parentSpanId: s.parentSpanId, attributes: attrs(s.attributes), resource: attrs(rs.resource?.attributes) });
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  const url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  return {
    url,
    spans,
    contentTypes,
    async waitFor(pred, ms = 15_000) {
      const end = performance.now() + ms;
      while (!pred(spans)) {
        if (performance.now() > end) throw new Error(`collector: condition not met; spans: ${JSON.stringify(spans.map((s) => s.name))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
