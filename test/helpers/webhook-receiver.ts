import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Received = { id: string; type: string; data: Record<string, unknown>; timestamp: string };

/**
 * A real webhook endpoint on 127.0.0.1: every request's signature is checked with the
 * `standardwebhooks` package (the spec's own TypeScript library); a bad one is answered 401 and
 * counted in `rejected`. It can be stopped and started again on the same port (an outage).
 */
export async function startReceiver(secret = '', opts: { answer?: (n: number) => { status: number; headers?: Record<string, string> } | 'hang' } = {}) {
  const received: Received[] = [];
  const rejected: string[] = [];
  let hits = 0;
  let key = secret;
  let port = 0;
  let server: Server | undefined;
  const hanging = new Set<import('node:http').ServerResponse>();
  const listen = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits++;
        const answer = opts.answer?.(hits);
        if (answer === 'hang') {
          hanging.add(res);
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          const payload = new Webhook(key).verify(body, req.headers as Record<string, string>) as Omit<Received, 'id'>;
          received.push({ id: req.headers['webhook-id'] as string, type: payload.type, data: payload.data, timestamp: payload.timestamp });
        } catch (e) {
          rejected.push((e as Error).message);
          res.writeHead(401).end();
          return;
        }
        res.writeHead(answer?.status ?? 204, answer?.headers).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  };
  await listen();
  return {
    received,
    rejected,
    get hits() {
      return hits;
    },
    get url() {
      return `http://127.0.0.1:${port}/hook`;
    },
    get port() {
      return port;
    },
    setSecret(s: string) {
      key = s;
    },
    /** Stops listening and drops every connection: the endpoint is down. */
    async stop() {
      for (const r of hanging) r.destroy();
      hanging.clear();
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    },
    /** Up again on the same port. */
    start: listen,
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Polls `check` until it holds or `ms` pass (the bound the feature promises), then asserts once more. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!(await check())) throw new Error(`not within ${ms} ms: ${what}`);
}
