import { Readable, finished } from 'node:stream';
import { CHUNK_SIZE, newFileKey, sealParts, type MasterKey } from './format.js';

/**
 * Stored chunks (3 buffers each: nonce, ciphertext, tag) queued before the
 * body is paused: about 1 MiB, what the local backend's write buffer holds.
 */
const QUEUED_CHUNKS = 16;

/**
 * The stored form of a plaintext body under a new data key, as a stream: the
 * format of encrypt() (src/lib/encryption/stream.ts), made for an upload.
 * Each chunk is sealed in the body's 'data' event, from the parts it arrived
 * in, as soon as a byte after it has arrived or the body has ended (the last
 * flag needs to know); the body is paused while about QUEUED_CHUNKS chunks
 * wait for the reader, so memory stays flat with the body's size.
 *
 * Why not encrypt() under Readable.from: an upload's every chunk then went
 * through three async generators (a promise per piece in each), the body's
 * reads joined the network's buffers into fresh memory, and the stream's
 * reads joined nonce, ciphertext and tag into fresh memory again: per
 * encrypted byte two buffers more for the garbage collector than the
 * ciphertext itself (docs/performance.md, "Write side (2026-12-03, stop 63)").
 * Here the stream is in object mode (its reader takes each buffer as it is),
 * and a body that ends within its first chunk (a small upload) is given as
 * one buffer, header and chunk together.
 *
 * Reading starts with the first read of the stream, as a body's would.
 * Destroying the stream destroys the body; a body that fails, or closes
 * before its end, fails the stream with that error.
 */
export function sealingStream(master: MasterKey, body: Readable): Readable {
  const { header, key } = newFileKey(master);
  let held: Buffer[] = [];
  let heldBytes = 0;
  let index = 0;
  let started = false;
  const out = new Readable({
    objectMode: true,
    highWaterMark: 3 * QUEUED_CHUNKS,
    read() {
      if (!started) {
        started = true;
        body.on('data', onData);
        body.once('end', onEnd);
      }
      body.resume();
    },
    destroy(err, cb) {
      body.off('data', onData);
      body.destroy();
      cb(err);
    },
  });
  // A body that fails before the backend reads the stream (its client went away) fails the
  // stream, whose reader then throws it; unheard until then, it would be uncaught.
  out.on('error', () => undefined);
  finished(body, { writable: false }, (err) => {
    if (err) out.destroy(err);
  });

  /** Seals what is held as chunk `index`; false when the reader is full. */
  const seal = (last: boolean): boolean => {
    const sealed = sealParts(key, index, last, held);
    index++;
    held = [];
    heldBytes = 0;
    let more = true;
    for (const p of sealed) more = out.push(p);
    return more;
  };

  function onData(raw: Buffer | string): void {
    let buf = typeof raw === 'string' ? Buffer.from(raw) : raw;
    let more = true;
    while (heldBytes + buf.length > CHUNK_SIZE) {
      const take = CHUNK_SIZE - heldBytes;
      if (take > 0) held.push(buf.subarray(0, take));
      buf = buf.subarray(take);
      // Bytes still follow this chunk: it is not the last.
      if (index === 0) out.push(header);
      more = seal(false);
    }
    if (buf.length > 0) {
      held.push(buf);
      heldBytes += buf.length;
    }
    if (!more) body.pause();
  }

  function onEnd(): void {
    if (index === 0) {
      out.push(Buffer.concat([header, ...sealParts(key, index++, true, held)]));
      held = [];
    } else seal(true);
    out.push(null);
  }

  return out;
}
