import type { ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { recycles } from '../storage/body.js';

/**
 * Sends `body` as the rest of `res` (its headers written), as pipeline does:
 * ends it at the body's end, destroys it (cuts the connection) on a read
 * error after the headers, destroys the body when the client goes. A body
 * that recycles its chunks (a local file's reader) gets each one back once
 * the socket has taken it (the write's callback), so a big file is sent
 * through a few buffers instead of a new one per read.
 */
export function sendBody(body: Readable, res: ServerResponse): void {
  if (!recycles(body)) {
    pipeline(body, res, () => undefined);
    return;
  }
  const resume = () => body.resume();
  body.on('data', (chunk: Buffer) => {
    if (!res.write(chunk, (e) => e || body.recycle(chunk))) body.pause();
  });
  res.on('drain', resume);
  body.once('end', () => res.end());
  body.once('error', () => res.destroy());
  res.once('close', () => {
    res.off('drain', resume);
    body.destroy();
  });
}
