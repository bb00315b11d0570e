import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request deadline's view of one request (src/app/request-deadline.ts): when it last made
 * progress, and a signal that fires when the deadline answered it. Everything a request's handler
 * starts runs inside its context, so the clients of the services report progress (an answer from
 * PostgreSQL, Redis or S3) to the request that asked, and a write can see that its request was
 * already answered 503 and must not commit.
 */
export type RequestProgress = { at: number; readonly controller: AbortController };

const current = new AsyncLocalStorage<RequestProgress>();

/** Runs `fn` (the server's request handler) with a fresh progress record; returns it too. */
export function withProgress<T>(fn: (progress: RequestProgress) => T): T {
  const progress: RequestProgress = { at: performance.now(), controller: new AbortController() };
  return current.run(progress, () => fn(progress));
}

/** A service answered: the request it was for is still moving. */
export function noteProgress(): void {
  const p = current.getStore();
  if (p) p.at = performance.now();
}

/** Fires once the request this code runs for was answered by its deadline (undefined outside a request). */
export function requestSignal(): AbortSignal | undefined {
  return current.getStore()?.controller.signal;
}

/** Runs `fn` outside any request: timers it starts (a lease's renewals) are no request's progress. */
export function outsideRequest<T>(fn: () => T): T {
  return current.exit(fn);
}
