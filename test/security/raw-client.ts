import { connect } from 'node:net';

export type RawResponse = { status: number; headers: Record<string, string>; body: string; closed: boolean };

/**
 * Sends bytes exactly as given and returns the first HTTP response, as soon
 * as it is complete (by Content-Length), so a server that answers before
 * reading a huge body and then resets the connection still counts as having
 * answered. Write errors (EPIPE, ECONNRESET after the answer) are ignored;
 * no answer at all is an error.
 */
export function rawExchange(url: string, request: Buffer | string | Buffer[], timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const parts = Array.isArray(request) ? request : [typeof request === 'string' ? Buffer.from(request, 'latin1') : request];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      const parsed = parse(buf);
      if (!parsed && !err) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (parsed) resolve({ ...parsed, closed: err === undefined ? false : true });
      else reject(new Error(`no complete HTTP response (${err?.message}): ${JSON.stringify(buf.toString('latin1').slice(0, 300))}`));
    };
    const timer = setTimeout(() => finish(new Error('timed out')), timeoutMs);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      finish();
    });
    socket.on('error', (e) => finish(e));
    socket.on('close', () => finish(new Error('closed')));
    socket.on('connect', async () => {
      for (const p of parts) {
        if (socket.destroyed) return;
        if (!socket.write(p)) await new Promise((r) => socket.once('drain', r).once('close', r));
      }
    });
  });
}

function parse(buf: Buffer): Omit<RawResponse, 'closed'> | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  if (!m) return { status: 0, headers: {}, body: buf.toString('latin1') };
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const status = Number(m[1]);
  const bodyStart = end + 4;
  if (headers['transfer-encoding'] === 'chunked') {
    // Our error answers are small: wait for the terminating chunk, then decode.
    const text = buf.subarray(bodyStart).toString('utf8');
    if (!text.includes('0\r\n\r\n')) return undefined;
    let out = '';
    let rest = text;
    for (;;) {
      const nl = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    return { status, headers, body: out };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length - bodyStart < length) return undefined;
  return { status, headers, body: buf.subarray(bodyStart, bodyStart + length).toString('utf8') };
}
