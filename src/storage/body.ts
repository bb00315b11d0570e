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

export { recycles, type Recycling } from '../lib/recycling.js';

/** The first `n` bytes of a stream and a stream of everything (those bytes first), read once. */
export async function peek(stream: Readable, n: number): Promise<{ head: Buffer; all: AsyncGenerator<Buffer> }> {
  const it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const parts: Buffer[] = [];
  let have = 0;
  let ended = false;
  while (have < n) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    parts.push(next.value);
    have += next.value.length;
  }
  const head = Buffer.concat(parts);
  async function* all(): AsyncGenerator<Buffer> {
    try {
      yield head;
      if (ended) return;
      for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
    } finally {
      stream.destroy();
    }
  }
  return { head, all: all() };
}
