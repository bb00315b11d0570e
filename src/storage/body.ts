import type { Readable } from 'node:stream';

/**
 * Runs `stage` while holding `body`'s errors for its eventual reader. A
 * backend does work before it reads the body (checks parents, claims a
 * name); a body that fails meanwhile (its client went away) keeps the error
 * for that read, which rethrows it as `aborted`. Without a listener in the
 * meantime it would be an uncaught exception.
 */
export async function holdingBodyErrors<T>(body: Readable, stage: () => Promise<T>): Promise<T> {
  const held = () => undefined;
  body.on('error', held);
  try {
    return await stage();
  } finally {
    body.off('error', held);
  }
}
