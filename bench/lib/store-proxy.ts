/**
 * A TCP proxy in front of the object store, for the bench: it counts the S3
 * requests that pass (read from the HTTP/1.1 request heads on each
 * connection) and can hold every byte sent to the store back by `delayMs`,
 * which adds that much to every store request's round trip, as a provider
 * across a network would (issue 53: "20 ms added to every store request").
 * Both sides of a comparison (File Cloud and the SDK's direct requests) go
 * through a proxy of their own, so each pays the same hop.
 */
import net from 'node:net';

export type StoreProxy = {
  /** `http://127.0.0.1:PORT`: the endpoint to give instead of the store's. */
  readonly endpoint: string;
  /** Added to every byte on its way to the store; may be changed while it runs. */
  delayMs: number;
  /** Requests counted since the last reset, by S3 operation. */
  counts(): Map<string, number>;
  /** The requests since the last reset in the order they came, each with when its head reached the proxy (performance.now()). */
  arrivals(): readonly { operation: string; at: number }[];
  reset(): void;
  close(): Promise<void>;
};

/** The S3 operation of a request, from its method, target and headers (what the counts are kept by). */
export function s3Operation(method: string, target: string, headers: Readonly<Record<string, string>>): string {
  const q = new URLSearchParams(target.includes('?') ? target.slice(target.indexOf('?') + 1) : '');
  const path = target.split('?')[0] ?? '/';
  const bucketOnly = path.replace(/^\/+|\/+$/g, '').split('/').length <= 1;
  const copy = headers['x-amz-copy-source'] !== undefined;
  switch (method) {
    case 'GET':
      if (q.has('uploads')) return 'ListMultipartUploads';
      if (q.has('uploadId')) return 'ListParts';
      if (bucketOnly) return q.get('list-type') === '2' ? 'ListObjectsV2' : 'ListObjects';
      return 'GetObject';
    case 'HEAD':
      return bucketOnly ? 'HeadBucket' : 'HeadObject';
    case 'PUT':
      if (q.has('partNumber')) return copy ? 'UploadPartCopy' : 'UploadPart';
      if (bucketOnly) return 'CreateBucket';
      return copy ? 'CopyObject' : 'PutObject';
    case 'POST':
      if (q.has('uploads')) return 'CreateMultipartUpload';
      if (q.has('uploadId')) return 'CompleteMultipartUpload';
      if (q.has('delete')) return 'DeleteObjects';
      return 'POST';
    case 'DELETE':
      if (q.has('uploadId')) return 'AbortMultipartUpload';
      return bucketOnly ? 'DeleteBucket' : 'DeleteObject';
    default:
      return method;
  }
}

/**
 * Reads the request heads out of one connection's bytes toward the store and
 * skips their bodies (Content-Length or chunked), calling `onRequest` for each.
 */
export function requestReader(onRequest: (operation: string) => void): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  let skip = 0; // body bytes still to pass
  let chunked = false;
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (skip > 0) {
        const n = Math.min(skip, buffered.length);
        skip -= n;
        buffered = buffered.subarray(n);
        if (skip > 0) return;
        continue;
      }
      if (chunked) {
        const eol = buffered.indexOf('\r\n');
        if (eol < 0) return;
        const size = Number.parseInt(buffered.subarray(0, eol).toString('latin1'), 16);
        buffered = buffered.subarray(eol + 2);
        if (size === 0) {
          // Trailers end with an empty line; the SDK sends none.
          chunked = false;
          skip = 2;
        } else skip = size + 2;
        continue;
      }
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buffered.subarray(0, end).toString('latin1').split('\r\n');
      buffered = buffered.subarray(end + 4);
      const [method = '', target = '/'] = (lines[0] ?? '').split(' ');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const colon = l.indexOf(':');
        if (colon > 0) headers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim();
      }
      onRequest(s3Operation(method, target, headers));
      chunked = /chunked/i.test(headers['transfer-encoding'] ?? '');
      skip = chunked ? 0 : Number(headers['content-length'] ?? 0);
    }
  };
}

export async function startStoreProxy(store: string, delayMs = 0): Promise<StoreProxy> {
  const target = new URL(store);
  let counts = new Map<string, number>();
  let arrivals: { operation: string; at: number }[] = [];
  const sockets = new Set<net.Socket>();
  const proxy: { delayMs: number } = { delayMs };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 80), target.hostname);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const read = requestReader((op) => {
      counts.set(op, (counts.get(op) ?? 0) + 1);
      arrivals.push({ operation: op, at: performance.now() });
    });
    // Bytes toward the store wait their delay, in order; the answers come straight back.
    const queue: { due: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drain = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && (queue[0] as { due: number }).due <= now) upstream.write((queue.shift() as { chunk: Buffer }).chunk);
      if (queue.length > 0) timer = setTimeout(drain, (queue[0] as { due: number }).due - now);
    };
    client.on('data', (chunk: Buffer) => {
      read(chunk);
      if (proxy.delayMs <= 0 && queue.length === 0) return void upstream.write(chunk);
      queue.push({ due: performance.now() + proxy.delayMs, chunk });
      timer ??= setTimeout(drain, proxy.delayMs);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      if (timer) clearTimeout(timer);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    get delayMs() {
      return proxy.delayMs;
    },
    set delayMs(ms: number) {
      proxy.delayMs = ms;
    },
    counts: () => new Map(counts),
    arrivals: () => [...arrivals],
    reset() {
      counts = new Map();
      arrivals = [];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
