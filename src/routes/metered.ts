import { Transform, type Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * Counts an answer's body as it goes out (share download limits): how many
 * bytes of an answer that was cut off the server had written, so a link's
 * count keeps only what was sent (services/shares.ts `charge`).
 */
export type Charge = (bytes: number, size: number) => Promise<(sent: number) => void>;

/**
 * The body with its bytes counted on their way to the connection; `settle`
 * gets the count once the answer ends (finished, cut or failed). A buffer
 * goes out in one write and counts whole: refunding it would make small
 * files free to anyone who closes the connection early.
 */
export function metered(reply: FastifyReply, body: Buffer | Readable, settle: (sent: number) => void): Buffer | Readable {
  if (Buffer.isBuffer(body)) {
    settle(body.length);
    return body;
  }
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      done(null, chunk);
    },
  });
  reply.raw.once('close', () => settle(sent));
  body.once('error', (err) => counter.destroy(err));
  counter.once('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return body.pipe(counter);
}
