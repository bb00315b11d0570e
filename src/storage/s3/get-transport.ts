/**
 * GetObject's bytes over a plain socket. Node's HTTP client copies every
 * body chunk once more and wakes JavaScript for it through the parser, and
 * a download from S3 goes through File Cloud, which receives and sends every
 * byte, so that copy was what bounded a large S3 GET (docs/performance.md,
 * "Figures behind the code").
 *
 * This wraps the SDK's own request handler: the SDK still builds, signs,
 * retries and parses every request and answer; only a GetObject's exchange
 * (one signed GET, no body) is written and read here, on keep-alive sockets
 * of our own. An answer this reader does not frame itself (chunked) is asked
 * again through the SDK's handler, which a GET allows.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';

/** The SDK's request (@smithy/types HttpRequest), the parts a GET uses. */
export type SdkRequest = {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query?: Record<string, string | string[] | null | undefined>;
  headers: Record<string, string>;
  body?: unknown;
  username?: string;
  password?: string;
  fragment?: string;
};
export type SdkResponse = { statusCode: number; reason?: string; headers: Record<string, string>; body: Readable };
export type HandleOptions = { abortSignal?: AbortSignal; requestTimeout?: number };
export type SdkHandler = {
  handle(request: SdkRequest, options?: HandleOptions): Promise<{ response: SdkResponse }>;
  destroy?(): void;
  metadata?: unknown;
  updateHttpClientConfig?(key: string, value: unknown): void;
  httpHandlerConfigs?(): Record<string, unknown>;
};

export type GetTransportOptions = {
  /** Connecting may take this long (the SDK handler's connectionTimeout). */
  connectionTimeoutMs: number;
  /** The answer's head must be in within this long of the request, connecting included; the body then has no bound. */
  answerTimeoutMs: number;
  /** An idle kept-alive socket is closed after this long, well before a store would close it under us. */
  idleMs?: number;
};

/** Larger heads are not an object store's answer to a GET. */
const MAX_HEAD = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/** RFC 3986 encoding, as the SDK writes a query (the signature covers the decoded pairs). */
const escapeUri = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function queryString(query: SdkRequest['query']): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    const k = escapeUri(key);
    if (Array.isArray(value)) for (const v of value) parts.push(`${k}=${escapeUri(v)}`);
    else if (value || typeof value === 'string') parts.push(`${k}=${escapeUri(value)}`);
    else parts.push(k);
  }
  return parts.join('&');
}

/** The request line and headers of a GET, as bytes. Header values with a line break are refused (they would split the head). */
export function requestHead(req: SdkRequest): string {
  const qs = queryString(req.query);
  let head = `GET ${req.path}${qs ? `?${qs}` : ''} HTTP/1.1\r\n`;
  let host = false;
  for (const [name, value] of Object.entries(req.headers)) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`A header of the request holds a line break: ${name}`);
    if (name.toLowerCase() === 'host') host = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!host) head += `Host: ${req.hostname}${req.port ? `:${req.port}` : ''}\r\n`;
  return `${head}\r\n`;
}

export type ParsedHead = { statusCode: number; reason: string; headers: Record<string, string>; keepAlive: boolean };

/** An answer's status line and headers (without the blank line); undefined when they are not HTTP/1.x. */
export function parseHead(text: string): ParsedHead | undefined {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const connection = (headers.connection ?? '').toLowerCase();
  const keepAlive = status[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  return { statusCode: Number(status[2]), reason: status[3] ?? '', headers, keepAlive };
}

const timeoutError = (message: string) => Object.assign(new Error(message), { name: 'TimeoutError' });
const abortError = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });
/** The socket ended or failed before an answer began: on a reused socket, the store closed it while idle. */
class NoAnswer extends Error {}
/** An answer this reader does not frame (chunked): the SDK's handler asks again. */
class AskAgain extends Error {}

/** A GetObject answer's body: the socket's chunks as they come, the socket paused while the reader is full. */
class ObjectBody extends Readable {
  /** Set once the whole answer is in: the socket may serve another request from then on and is not ours to touch. */
  released = false;
  constructor(private readonly source: Socket) {
    super();
  }
  override _read(): void {
    if (!this.released) this.source.resume();
  }
  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    // Given up in the middle of the answer (the client went away): the socket is out of step, never reused.
    if (!this.released) this.source.destroy();
    cb(err);
  }
}

const READ_MIN = 64 * 1024;
const READ_MAX = 1024 * 1024;

/**
 * A socket to the store and where its bytes go now (the answer being read,
 * or nothing while it waits in the pool). Plain sockets read into buffers of
 * our own that grow while reads fill them: a large download moves 1 MiB a
 * read, which also makes the writes to the client fewer and larger and costs
 * less CPU than Node's 64 KiB reads (docs/performance.md, "Figures behind the
 * code"), and a small answer takes no more than Node's read.
 */
class Conn {
  sink: (chunk: Buffer) => void = () => this.socket.destroy();
  readonly socket: Socket;
  private buf: Buffer | undefined;
  private size = READ_MIN;

  constructor(r: SdkRequest) {
    let host = r.hostname;
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const port = r.port ?? (r.protocol === 'https:' ? 443 : 80);
    // No Nagle: a request head sent while the last answer's ACK is still delayed waited for it (docs/performance.md, "Sixth change").
    if (r.protocol === 'https:') {
      this.socket = tlsConnect({ host, port, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
      this.socket.setNoDelay(true);
      this.socket.on('data', (chunk: Buffer) => this.sink(chunk));
    } else {
      this.socket = netConnect({ host, port, noDelay: true, onread: { buffer: () => (this.buf ??= Buffer.allocUnsafe(this.size)), callback: (n, buf) => this.read(n, buf as Buffer) } });
      // (read() returns true: the answer being read pauses the socket itself when its reader is full.)
    }
  }

  private read(n: number, buf: Buffer): true {
    if (n === buf.length) this.size = Math.min(this.size * 2, READ_MAX);
    let chunk: Buffer;
    if (n >= buf.length / 2) {
      // Mostly full: handed on as it is, the next read gets a new buffer.
      chunk = buf.subarray(0, n);
      this.buf = undefined;
    } else {
      // A short read is copied out, so the buffer it came in serves the next read.
      chunk = Buffer.allocUnsafe(n);
      buf.copy(chunk, 0, 0, n);
    }
    this.sink(chunk);
    return true;
  }

  /** Back to a small read buffer while it waits for the next request. */
  rest(): void {
    this.buf = undefined;
    this.size = READ_MIN;
  }
}

export function getTransport(inner: SdkHandler, opts: GetTransportOptions): SdkHandler {
  const idleMs = opts.idleMs ?? 4000;
  const idle = new Map<string, Conn[]>();

  const originOf = (r: SdkRequest) => `${r.protocol}//${r.hostname}:${r.port ?? (r.protocol === 'https:' ? 443 : 80)}`;

  /** Keeps a socket whose answer was read to its end for the next GET to the same store. */
  function park(origin: string, conn: Conn): void {
    const { socket } = conn;
    const drop = () => socket.destroy();
    conn.rest();
    // Anything the store sends to an idle socket is out of step: closed, never reused.
    conn.sink = drop;
    socket.on('error', drop).on('end', drop);
    socket.setTimeout(idleMs);
    socket.on('timeout', drop);
    socket.unref();
    const list = idle.get(origin) ?? [];
    list.push(conn);
    idle.set(origin, list);
    socket.once('close', () => {
      const l = idle.get(origin);
      const i = l?.indexOf(conn) ?? -1;
      if (l && i >= 0) l.splice(i, 1);
    });
  }

  function take(origin: string): Conn | undefined {
    const list = idle.get(origin);
    for (let c = list?.pop(); c; c = list?.pop()) {
      const s = c.socket;
      if (s.destroyed || !s.writable || s.readableEnded) continue;
      for (const event of ['error', 'end', 'close', 'timeout']) s.removeAllListeners(event);
      s.setTimeout(0);
      s.ref();
      return c;
    }
    return undefined;
  }

  /** One exchange on one socket: resolves with the answer once its head is in. */
  function exchange(request: SdkRequest, head: string, reused: Conn | undefined, signal: AbortSignal | undefined): Promise<SdkResponse> {
    const origin = originOf(request);
    const conn = reused ?? new Conn(request);
    const { socket } = conn;
    return new Promise<SdkResponse>((resolve, reject) => {
      let received: Buffer[] = [];
      let size = 0;
      let answered = false;
      let body: ObjectBody | undefined;
      let remaining = -1; // bytes of body still to come; -1: until the socket ends
      let reusable = false;

      /** The exchange lets go of the socket: no listener of it stays on (a parked socket gets its own). */
      const cleanup = () => {
        signal?.removeEventListener('abort', onAbort);
        clearTimeout(connectTimer);
        conn.sink = () => socket.destroy();
        socket.removeListener('end', onEnd).removeListener('error', onError).removeListener('close', onClose);
        headWaited();
      };
      const fail = (e: Error) => {
        cleanup();
        // An error on the socket must still have a listener once it is destroyed.
        socket.on('error', () => undefined);
        socket.destroy();
        if (!answered) reject(e);
        else if (body && !body.released) body.destroy(e);
      };
      const onAbort = () => fail(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });

      // Connecting has its bound, and the whole wait for the answer's head its own.
      const connectTimer = reused
        ? undefined
        : setTimeout(() => fail(timeoutError(`Socket timed out without establishing a connection within ${opts.connectionTimeoutMs} ms`)), opts.connectionTimeoutMs);
      if (!reused) socket.once(request.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      const answerTimer = setTimeout(() => fail(timeoutError(`The object store sent no answer within ${opts.answerTimeoutMs} ms.`)), opts.answerTimeoutMs);
      const headWaited = () => clearTimeout(answerTimer);

      const finish = () => {
        cleanup();
        if (body) body.released = true;
        body?.push(null);
        if (reusable) park(origin, conn);
        else socket.on('error', () => undefined).destroy();
      };

      function onBody(chunk: Buffer) {
        if (remaining >= 0) {
          if (chunk.length > remaining) {
            // More than the answer holds: the socket is out of step, never reused.
            reusable = false;
            chunk = chunk.subarray(0, remaining);
          }
          remaining -= chunk.length;
        }
        if (chunk.length > 0 && !body?.push(chunk)) socket.pause();
        if (remaining === 0) finish();
      }

      function onHead(chunk: Buffer) {
        received.push(chunk);
        size += chunk.length;
        const all = received.length === 1 ? chunk : Buffer.concat(received, size);
        received = [all];
        const end = all.indexOf(HEAD_END);
        if (end < 0) {
          if (size > MAX_HEAD) fail(new Error('The object store sent an answer head over 64 KiB.'));
          return;
        }
        const parsed = parseHead(all.toString('latin1', 0, end));
        if (!parsed) return fail(new Error('The object store sent an answer that is not HTTP/1.1.'));
        if (parsed.headers['transfer-encoding'] !== undefined) return fail(new AskAgain('chunked'));
        const length = parsed.headers['content-length'];
        if (length !== undefined && !/^\d+$/.test(length)) return fail(new Error('The object store sent an invalid Content-Length.'));
        remaining = parsed.statusCode === 204 || parsed.statusCode === 304 ? 0 : length !== undefined ? Number(length) : -1;
        reusable = parsed.keepAlive && remaining >= 0;
        answered = true;
        // A download's body is read as fast as its client takes it: pauses of any length are the client's.
        headWaited();
        body = new ObjectBody(socket);
        resolve({ statusCode: parsed.statusCode, reason: parsed.reason, headers: parsed.headers, body });
        conn.sink = onBody;
        const rest = all.subarray(end + HEAD_END.length);
        if (rest.length > 0 || remaining === 0) onBody(rest);
      }

      function onEnd() {
        if (!answered) return fail(new NoAnswer('The object store closed the connection before answering.'));
        if (remaining < 0) return finish(); // framed by the end of the connection
        fail(new Error('The object store closed the connection in the middle of an answer.'));
      }
      function onError(e: Error) {
        fail(answered || !reused ? e : new NoAnswer(e.message));
      }
      function onClose() {
        fail(answered ? new Error('The object store closed the connection in the middle of an answer.') : new NoAnswer('The connection closed before an answer.'));
      }
      conn.sink = onHead;
      socket.on('end', onEnd).on('error', onError).on('close', onClose);
      socket.resume();
      socket.write(head);
    });
  }

  async function get(request: SdkRequest, options: HandleOptions): Promise<{ response: SdkResponse }> {
    const signal = options.abortSignal;
    if (signal?.aborted) throw abortError();
    const head = requestHead(request);
    const reused = take(originOf(request));
    try {
      return { response: await exchange(request, head, reused, signal) };
    } catch (e) {
      // A kept-alive socket the store closed while it was idle: once more on a new one.
      if (e instanceof NoAnswer && reused) return get(request, options);
      if (e instanceof AskAgain) return inner.handle(request, options);
      throw e;
    }
  }

  return {
    // What the SDK asks of its handler besides requests goes to its own one.
    get metadata() {
      return inner.metadata;
    },
    updateHttpClientConfig: (key: string, value: unknown) => inner.updateHttpClientConfig?.(key, value),
    httpHandlerConfigs: () => inner.httpHandlerConfigs?.() ?? {},
    handle(request: SdkRequest, options: HandleOptions = {}) {
      const plain = request.method === 'GET' && request.query?.['x-id'] === 'GetObject' && request.body === undefined && request.username == null && request.password == null && !request.fragment;
      return plain ? get(request, options) : inner.handle(request, options);
    },
    destroy() {
      for (const list of idle.values()) for (const c of list) c.socket.destroy();
      idle.clear();
      inner.destroy?.();
    },
  };
}
