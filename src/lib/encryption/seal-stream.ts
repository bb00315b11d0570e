import { Readable, finished } from 'node:stream';
import type { Recycling } from '../recycling.js';
import { CHUNK_SIZE, newFileKey, sealParts, sealPartsInto, sealedSize, type MasterKey } from './format.js';
import { nativeGcm, type NativeGcm } from './native-gcm.js';

/**
 * Stored chunks (one buffer each sealed natively, three on node:crypto) queued before the
 * body is paused: about 1 MiB, what the local backend's write buffer holds.
 */
const QUEUED_CHUNKS = 16;

/**
 * Stored-chunk buffers kept for reuse once handed back: what waits in the
 * stream and in the local backend's write buffer (1 MiB) at once, and more.
 */
const KEPT = 2 * QUEUED_CHUNKS;

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
 * With native/gcm-part.c loaded (`native`; null: node:crypto), each chunk is sealed in one
 * piece (nonce, ciphertext, tag) into a buffer of the stream's own, and a
 * reader that has stored a chunk hands it back with `recycle` (the local
 * backend once its write returned, S3's upload once it copied the chunk
 * into a part): the next chunk is sealed into it instead of fresh memory, whose
 * page faults were half the cost of sealing (docs/performance.md, "A native
 * AES-GCM, prototyped"). Only a buffer this stream lent and has not had back
 * is taken back, so a chunk handed back twice is reused once. On node:crypto
 * the stream has no `recycle`.
 *
 * Reading starts with the first read of the stream, as a body's would.
 * Destroying the stream destroys the body; a body that fails, or closes
 * before its end, fails the stream with that error.
 */
export function sealingStream(master: MasterKey, body: Readable, native: NativeGcm | null = nativeGcm ?? null): Readable & Partial<Recycling> {
  const { header, key } = newFileKey(master);
  let held: Buffer[] = [];
  let heldBytes = 0;
  let index = 0;
  let started = false;
  const full = sealedSize(key.version, CHUNK_SIZE);
  const free: Buffer[] = [];
  /** The memory of the chunks lent to the reader and not handed back yet (weakly: a reader that never hands back lets it go). */
  const lent = new WeakSet<ArrayBufferLike>();
  const lend = (): Buffer => {
    // Memory of its own (never a slice of Node's shared pool), so a chunk's memory names it.
    const b = free.pop() ?? Buffer.allocUnsafeSlow(full);
    lent.add(b.buffer);
    return b;
  };
  const out = new Readable({
    objectMode: true,
    // A chunk is one buffer sealed natively, three on node:crypto (nonce, ciphertext, tag).
    highWaterMark: (native ? 1 : 3) * QUEUED_CHUNKS,
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
    let more = true;
    if (native) more = out.push(sealPartsInto(native, key, index, last, held, lend()));
    else for (const p of sealParts(key, index, last, held)) more = out.push(p);
    index++;
    held = [];
    heldBytes = 0;
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
      // A small body: header and chunk in one buffer, never lent (a reader may keep it).
      if (native) {
        const whole = Buffer.allocUnsafe(header.length + sealedSize(key.version, heldBytes));
        header.copy(whole);
        sealPartsInto(native, key, index++, true, held, whole.subarray(header.length));
        out.push(whole);
      } else out.push(Buffer.concat([header, ...sealParts(key, index++, true, held)]));
      held = [];
    } else seal(true);
    out.push(null);
  }

  // Only a stream that lends its chunks takes them back: a reader of the node:crypto path's fresh
  // buffers has nothing to hand back, and asks for no callback per write (recycles()).
  if (!native) return out;
  return Object.assign(out, {
    recycle(chunk: Buffer): void {
      if (!lent.delete(chunk.buffer)) return;
      if (free.length < KEPT) free.push(Buffer.from(chunk.buffer, 0, full));
    },
  });
}
