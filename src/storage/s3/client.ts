import { Agent } from 'node:http';
import type { Socket } from 'node:net';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { StorageError } from '../backend.js';
import type { S3Location } from './location.js';
import { serviceCall } from '../../lib/progress.js';
import { getTransport, type SdkHandler } from './get-transport.js';

export type S3Credentials = { readonly accessKeyId: string; readonly secretAccessKey: string };

/**
 * What Ceph radosgw needs of the AWS SDK, in this one place (the server's client, the tests' and the
 * bench's direct clients all take it from here). Checksums only where S3 requires them: since 3.729 the
 * SDK adds CRC32 checksums and aws-chunked trailers to every upload and validates every download by
 * default, and radosgw 16 takes no aws-chunked trailers on streamed bodies (docs/storage.md). Path-style
 * addressing: a radosgw endpoint has no wildcard DNS for bucket sub-domains; AWS itself can use either.
 */
export function radosgwCompatible(pathStyle = true): Pick<S3ClientConfig, 'forcePathStyle' | 'requestChecksumCalculation' | 'responseChecksumValidation'> {
  return { forcePathStyle: pathStyle, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' };
}

/**
 * Commands that move a file's bytes (or copy them inside the store) may rightly take long: they are
 * bounded by the socket's idle timeout (no byte for `timeoutMs`), not by a total deadline. A
 * GetObject's deadline runs until its answer's head only: the body is a stream read long after.
 */
const TRANSFERS = new Set(['GetObjectCommand', 'UploadPartCommand', 'UploadPartCopyCommand', 'CopyObjectCommand', 'PutObjectCommand']);

/**
 * One client per backend: keep-alive sockets (a 4 KiB GET must not pay a
 * TCP handshake), and radosgw's settings (radosgwCompatible). Every request
 * is bounded (docs/operations.md, "When a service fails"): connecting;
 * every request that does not carry a file's bytes (and a GetObject until its
 * answer begins) by a total deadline of twice `timeoutMs`, its retry
 * included; a transfer by its socket's stalls. A hung or unreachable store
 * answers 503 in seconds.
 */
export function createS3Client(loc: S3Location, credentials?: S3Credentials, opts: { timeoutMs?: number } = {}): S3Client {
  const timeoutMs = Math.round(opts.timeoutMs ?? 4000);
  // A request that is not a transfer has this long in all, its one retry included: each attempt about timeoutMs.
  // A busy store takes seconds for a HEAD (docs/performance.md, "Figures behind the code").
  const deadlineMs = 2 * timeoutMs;
  const agentOptions = { keepAlive: true, maxSockets: 256 };
  const agents = { httpAgent: new Agent(agentOptions), httpsAgent: new HttpsAgent(agentOptions) };
  const base: S3ClientConfig = {
    region: loc.region,
    ...radosgwCompatible(loc.pathStyle),
    maxAttempts: 2,
    // No `Expect: 100-continue`: a store that hangs would hold every upload part for the SDK's wait for a
    // "continue" before its socket timeout even starts, while a part refused after being sent costs little
    // (docs/performance.md, "Figures behind the code").
    expectContinueHeader: false,
  };
  if (loc.endpoint) base.endpoint = loc.endpoint;
  if (credentials) base.credentials = credentials;
  // socketTimeout: a socket without a byte for this long fails the request (the SDK's requestTimeout only warns).
  // Requests bounded by the deadline: the deadline decides.
  const connectionTimeout = Math.min(timeoutMs, 3000);
  // cacheMiddleware: a command sent without options reuses its resolved middleware (GetObject, below).
  const client = new S3Client({ ...base, cacheMiddleware: true, requestHandler: { connectionTimeout, socketTimeout: deadlineMs, ...agents } });
  // GetObject's exchange on sockets of our own, the rest through the SDK's handler (get-transport.ts says why).
  // Each attempt has timeoutMs for its answer's head, connecting included: the two take about the deadline.
  const config = client.config as unknown as { requestHandler: SdkHandler };
  config.requestHandler = getTransport(config.requestHandler, { connectionTimeoutMs: connectionTimeout, answerTimeoutMs: timeoutMs });
  // Transfers, with no deadline: one attempt, bounded by its connection and socket timeouts
  // (docs/performance.md, "Figures behind the code"). No retry: a conditional PutObject retried after its first attempt
  // landed unseen would be refused as "already exists", and a retried part would double the wait.
  const transfers = new S3Client({ ...base, maxAttempts: 1, requestHandler: { connectionTimeout, socketTimeout: timeoutMs, ...agents } });
  const send = client.send.bind(client) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  const sendTransfer = transfers.send.bind(transfers) as typeof send;
  (client as { send: unknown }).send = (command: { constructor: { name: string } }, options?: { abortSignal?: AbortSignal }) => {
    const name = command.constructor.name;
    if (TRANSFERS.has(name) && name !== 'GetObjectCommand') return serviceCall(() => sendTransfer(command, options));
    // A GetObject is bounded by its transport (above), so it needs no deadline signal; sent without options, the
    // SDK skips resolving its middleware again for every request (docs/performance.md, "Figures behind the code").
    if (name === 'GetObjectCommand' && !options) return serviceCall(() => send(command)).then(unboundBody);
    // A GetObject's deadline ends with its answer's head: the body that follows may rightly take long.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), deadlineMs);
    const deadline = controller.signal;
    const abortSignal = options?.abortSignal ? AbortSignal.any([options.abortSignal, deadline]) : deadline;
    return serviceCall(() => send(command, { ...options, abortSignal })).finally(() => clearTimeout(timer)).then(unboundBody, (e: unknown) => {
      // The SDK reports our deadline as an AbortError: it is the store that did not answer in time.
      if (deadline.aborted && !options?.abortSignal?.aborted) throw Object.assign(new Error(`The object store did not answer within ${deadlineMs} ms.`, { cause: e }), { name: 'TimeoutError' });
      throw e;
    });
  };
  const destroy = client.destroy.bind(client);
  client.destroy = () => {
    transfers.destroy();
    destroy();
  };
  return client;
}

/**
 * A download's body is read as fast as its client takes it: pauses of any length are the client's, not a
 * store that hangs (the client's own socket has the idle timeout). For an answer that came through the
 * SDK's handler (get-transport.ts's sockets drop their bound once the head is in).
 */
function unboundBody(r: unknown): unknown {
  ((r as { Body?: { socket?: Socket } } | undefined)?.Body?.socket)?.setTimeout(0);
  return r;
}

type SdkError = { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $fault?: string };

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'TimeoutError', 'RequestTimeout']);

/** The S3 status of an SDK error (404, 412, …), or undefined for a transport failure. */
export const statusOf = (e: unknown): number | undefined => (e as SdkError | null)?.$metadata?.httpStatusCode;

export const isNotFound = (e: unknown): boolean => {
  const err = e as SdkError | null;
  return statusOf(e) === 404 || err?.name === 'NoSuchKey' || err?.name === 'NotFound';
};

/**
 * SDK failures as the seam's codes: the store out of reach → `unavailable`
 * (503), the store answering with an error of its own (5xx, a missing
 * bucket, refused credentials) → `failed` (502). Never a 500 with a stack.
 */
export function fromS3Error(e: unknown, what: string): unknown {
  if (e instanceof StorageError) return e;
  const err = (e ?? {}) as SdkError;
  const status = statusOf(e);
  if (NETWORK.has(err.code ?? '') || NETWORK.has(err.name ?? '') || (status === undefined && err.$fault !== 'client' && e instanceof Error && /socket|connect|timeout/i.test(e.message))) {
    return new StorageError('unavailable', `${what}: the object store cannot be reached.`, { cause: e });
  }
  if (status === 503 || err.name === 'SlowDown') return new StorageError('unavailable', `${what}: the object store is overloaded.`, { cause: e });
  // NoSuchUpload: the multipart upload we were writing was aborted under us (another tool, a lifecycle rule).
  if ((status !== undefined && status >= 500) || err.name === 'NoSuchBucket' || err.name === 'NoSuchUpload' || status === 403) {
    return new StorageError('failed', `${what}: the object store answered ${err.name ?? status}.`, { cause: e });
  }
  return e;
}

/** Runs one SDK call, translating its failures. */
export async function s3Call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fromS3Error(e, what);
  }
}
