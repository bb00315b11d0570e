/**
 * A service File Cloud depends on did not answer in time or could not be
 * reached: the database, or Redis (coordination: the login throttle and
 * leases). Raised where the client library's error is first seen
 * (src/store/postgres.ts, src/cluster/redis.ts), so the one error mapping
 * (src/http/error-handler.ts) can answer 503 with the service's name instead
 * of guessing from a bare ECONNREFUSED or "Query read timeout". Storage has
 * its own StorageError('unavailable') (src/storage/s3/client.ts).
 */
export type Dependency = 'database' | 'coordination';

export class DependencyError extends Error {
  constructor(
    readonly dependency: Dependency,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DependencyError';
  }
}

export const isDependencyError = (e: unknown): e is DependencyError => e instanceof DependencyError;

/** The first DependencyError in `e`'s cause chain (a few levels: wrappers add one each). */
export function dependencyErrorIn(e: unknown): DependencyError | undefined {
  for (let i = 0, cur = e; i < 6 && cur !== null && typeof cur === 'object'; i++, cur = (cur as { cause?: unknown }).cause) {
    if (cur instanceof DependencyError) return cur;
  }
  return undefined;
}

/** Seconds a client should wait before retrying after a 503 for an unavailable service. */
export const RETRY_AFTER_SECONDS = 5;
