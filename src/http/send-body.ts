import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { recycles } from '../storage/body.js';

/**
 * Sends `body` as the rest of `res` (its headers written), as pipeline does:
 * ends it at the body's end, destroys it (cuts the connection) on a read
 * error after the headers, destroys the body when the client goes. A body
 * that recycles its chunks (a local file's reader) gets each one back once
 * the socket has taken it (the write's callback), so a big file is sent
 * through a few buffers instead of a new one per read.
 *
 * Any other body's chunks given in one tick go out in one write: a stream
 * that yields a burst of chunks (a decryption: a 64 KiB chunk each, a
 * storage read's worth at once) would otherwise cost a socket write, and the
 * loopback's TCP work, per chunk. The burst is written whole before the body
 * waits for the socket to drain (pausing at the first full write would let
 * one chunk through per drain, one write each again); a burst is at most
 * what the body holds, one storage read for a decryption.
 */
export function sendBody(body: Readable, res: ServerResponse): void {
  const end = () => res.end();
  const fail = () => res.destroy();
  const resume = () => body.resume();
  res.on('drain', resume);
  body.once('end', end);
  body.once('error', fail);
  res.once('close', () => {
    res.off('drain', resume);
    body.destroy();
  });
  if (!recycles(body)) {
    const flush = () => {
      // end() uncorks fully itself: the body may have ended in this tick.
      if (res.writableCorked > 0) res.uncork();
      if (res.writableNeedDrain) body.pause();
    };
    body.on('data', (chunk: Buffer) => {
      if (res.writableCorked === 0) {
        res.cork();
        process.nextTick(flush);
      }
      res.write(chunk);
    });
    return;
  }
  body.on('data', (chunk: Buffer) => {
    if (!res.write(chunk, (e) => e || body.recycle(chunk))) body.pause();
  });
}
