import { pipeline, Transform, type Readable } from 'node:stream';
import { StorageError } from './backend.js';

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

/**
 * `source`, failing at its end when it gave other than `length` bytes. A
 * download's Content-Length is sent before its bytes: a file that shrank
 * under the read must cut the answer (the client sees a broken transfer at
 * once), not end it short (the client would wait for the missing bytes).
 */
export function exactly(length: number, source: Readable): Readable {
  let seen = 0;
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      done(seen === length ? null : new StorageError('failed', `The file changed while it was read (${seen} of ${length} bytes).`));
    },
  });
  // Destroying the result (a client gone) destroys the source too, which closes its file.
  return pipeline(source, check, () => undefined);
}

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
