import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request deadline's view of one request (src/app/request-deadline.ts): when it last made
 * progress, how many service calls it waits for, and a signal that fires when the deadline answered
 * it. Everything a request's handler starts runs inside its context, so the clients of the services
 * (PostgreSQL, Redis, S3) report their calls to the request that made them, and a write can see
 * that its request was already answered 503 and must not commit.
 */
export type RequestProgress = { at: number; pending: number; readonly controller: AbortController };

const current = new AsyncLocalStorage<RequestProgress>();

/** Runs `fn` (the server's request handler) with a fresh progress record; returns it too. */
export function withProgress<T>(fn: (progress: RequestProgress) => T): T {
  const progress: RequestProgress = { at: performance.now(), pending: 0, controller: new AbortController() };
  return current.run(progress, () => fn(progress));
}

/**
 * A call to a service (PostgreSQL, Redis, S3) for the current request: while one is unanswered the
 * request is waiting for a service, which is what the deadline watches; work of its own (hashing a
 * password, drawing a thumbnail, a long delete on local disk) never counts against it.
 */
export async function serviceCall<T>(call: () => Promise<T>): Promise<T> {
  const p = current.getStore();
  if (!p) return call();
  p.pending++;
  try {
    return await call();
  } finally {
    p.pending--;
    p.at = performance.now();
  }
}

/** Fires once the request this code runs for was answered by its deadline (undefined outside a request). */
export function requestSignal(): AbortSignal | undefined {
  return current.getStore()?.controller.signal;
}

/** Runs `fn` outside any request: timers it starts (a lease's renewals) are no request's progress. */
export function outsideRequest<T>(fn: () => T): T {
  return current.exit(fn);
}
