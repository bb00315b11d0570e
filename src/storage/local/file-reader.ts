import { close, read } from 'node:fs';
import { Readable } from 'node:stream';
import { StorageError } from '../backend.js';
import type { Recycling } from '../body.js';

/**
 * Bytes per read of a download. Node's default (64 KiB) makes a 1 GiB
 * download 16,384 thread-pool reads and socket writes; 1 MiB makes it 1,024
 * (docs/performance.md, "Large files and their Node ceiling"). Memory stays
 * bounded per download: a chunk read ahead, and the few the socket holds.
 */
export const READ_CHUNK = 1024 * 1024;

/** Buffers a reader keeps for its next reads; a socket that took them back while two more were read needs no more. */
const KEPT = 4;

/**
 * Bytes `start`..`end` of the open file `fd` as a stream of READ_CHUNK reads,
 * exactly that many bytes: a file that shrank under the read fails the
 * stream at its end (a download's Content-Length is already sent, so the
 * answer must be cut, not ended short). It owns `fd` and closes it once it
 * ends or is destroyed, after a read under way has returned (the number
 * must not be reused under that read).
 *
 * A consumer that knows when it is done with a chunk (the socket took it)
 * hands it back with `recycle`, and the next read goes into that buffer
 * instead of a new one: a fresh 1 MiB buffer per read costs its page faults,
 * about a third of the CPU of sending a big file (docs/performance.md). A
 * consumer that does not (a pipe) gets a new buffer per read, as from
 * fs.createReadStream.
 */
export class FileReader extends Readable implements Recycling {
  private pos: number;
  private readonly end: number;
  private readonly fd: number;
  private readonly free: Buffer[] = [];
  /** The buffers this reader allocated: only those come back through recycle. */
  private readonly own = new WeakSet<ArrayBufferLike>();
  private reading = false;
  private closeAfterRead: ((e?: Error | null) => void) | undefined;

  constructor(fd: number, start: number, end: number) {
    super({ highWaterMark: READ_CHUNK });
    this.fd = fd;
    this.pos = start;
    this.end = end;
  }

  recycle(chunk: Buffer): void {
    if (this.free.length < KEPT && this.own.has(chunk.buffer)) this.free.push(Buffer.from(chunk.buffer, 0, READ_CHUNK));
  }

  override _read(): void {
    const length = Math.min(READ_CHUNK, this.end + 1 - this.pos);
    if (length <= 0) {
      this.push(null);
      return;
    }
    let buffer = this.free.pop();
    if (!buffer) {
      buffer = Buffer.allocUnsafeSlow(READ_CHUNK);
      this.own.add(buffer.buffer);
    }
    const into = buffer;
    this.reading = true;
    read(this.fd, into, 0, length, this.pos, (error, bytesRead) => {
      this.reading = false;
      if (this.closeAfterRead) return this.closeFd(this.closeAfterRead);
      if (error) return this.destroy(error);
      if (bytesRead === 0) return this.destroy(new StorageError('failed', `The file changed while it was read (${this.pos} of ${this.end + 1} bytes).`));
      this.pos += bytesRead;
      this.push(bytesRead === into.length ? into : into.subarray(0, bytesRead));
    });
  }

  override _destroy(error: Error | null, done: (e?: Error | null) => void): void {
    const finish = (closeError?: Error | null) => done(error ?? closeError);
    if (this.reading) this.closeAfterRead = finish;
    else this.closeFd(finish);
  }

  private closeFd(done: (e?: Error | null) => void): void {
    close(this.fd, (e) => done(e));
  }
}
