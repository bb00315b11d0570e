import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { pipeline } from 'node:stream/promises';
import type { StorageKey } from '../domain/storage-path.js';
import type { Entry } from '../storage/backend.js';

/**
 * A file open for writing: its bytes go to a private staging file on local disk, at the offsets the
 * client names, and reach storage only when the client closes the handle (through the same upload
 * as WebDAV's PUT, so quotas, versions and the change feed are the upload's). A client that goes
 * away first leaves nothing but the staging file, which is removed.
 */
export class StagedWrite {
  size: number;
  /** The time the client set on the file (setstat before the close): the stored file's time where storage keeps it. */
  modified: Date | undefined;
  private constructor(
    readonly key: StorageKey,
    readonly path: string,
    readonly fh: FileHandle,
    readonly append: boolean,
    size: number,
  ) {
    this.size = size;
  }

  /**
   * A staging file in `dir`: empty, or a copy of `from` (an existing file written at an offset:
   * `reput`, resumes), so the file in storage stays whole until the close replaces it.
   */
  static async open(dir: string, key: StorageKey, opts: { append: boolean; from?: () => Promise<Readable> }): Promise<StagedWrite> {
    const path = join(dir, `sftp-${randomUUID()}`);
    let size = 0;
    if (opts.from) {
      try {
        await pipeline(await opts.from(), createWriteStream(path, { flags: 'wx', mode: 0o600 }));
      } catch (e) {
        await unlink(path).catch(() => undefined);
        throw e;
      }
    }
    const fh = await open(path, opts.from ? 'r+' : 'wx+', 0o600);
    if (opts.from) size = (await fh.stat()).size;
    return new StagedWrite(key, path, fh, opts.append, size);
  }

  async write(offset: number, data: Buffer): Promise<void> {
    const at = this.append ? this.size : offset;
    let done = 0;
    while (done < data.length) done += (await this.fh.write(data, done, data.length - done, at + done)).bytesWritten;
    this.size = Math.max(this.size, at + data.length);
  }

  async read(offset: number, length: number): Promise<Buffer | undefined> {
    if (offset >= this.size) return undefined;
    const buf = Buffer.alloc(Math.min(length, this.size - offset));
    const { bytesRead } = await this.fh.read(buf, 0, buf.length, offset);
    return bytesRead === 0 ? undefined : buf.subarray(0, bytesRead);
  }

  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
    this.size = size;
  }

  /** Closes the staging file; `commit` is handed its path and runs before it is removed. */
  async finish(commit?: (path: string, size: number) => Promise<void>): Promise<void> {
    try {
      await this.fh.close();
      if (commit) await commit(this.path, this.size);
    } finally {
      await unlink(this.path).catch(() => undefined);
    }
  }
}

/** Bytes a streamed write holds for offsets beyond the next one (a client that sends out of order, or a sparse file). */
const MAX_AHEAD = 2 * 1024 * 1024;
/** The streamed body's buffer: a WRITE is answered at once while the upload has taken all but this. */
const BODY_HWM = 1024 * 1024;
/** The zeros of a hole are pushed this many at a time. */
const ZEROS = Buffer.alloc(256 * 1024);

/**
 * A new file (or one opened to be truncated) open for writing without reading: its bytes stream
 * straight into the upload (`start` gets the body at the open), which stages them once where the
 * backend stages every upload and makes them the file at the close — no copy of a copy. The
 * client's WRITEs are answered as soon as the body has room, so the requests it keeps in flight
 * overlap the upload. Writes arrive at increasing offsets; one ahead of the next is held (up to
 * MAX_AHEAD, then the hole before it is zeros, as in a sparse file); one behind what was sent, or
 * a truncation below it, is refused and gives the upload up (clients that go back open with READ
 * and get a StagedWrite).
 */
export class StreamedWrite {
  /** What the client sees of the file: the end of its furthest write. */
  size = 0;
  modified: Date | undefined;
  /** Bytes pushed into the body so far. */
  private sent = 0;
  private readonly ahead = new Map<number, Buffer>();
  private aheadBytes = 0;
  private readonly body: Readable;
  private readonly upload: Promise<void>;
  private failure: { error: unknown } | undefined;
  private room: (() => void) | undefined;
  constructor(
    readonly key: StorageKey,
    start: (body: Readable) => Promise<void>,
  ) {
    this.body = new Readable({ highWaterMark: BODY_HWM, read: () => this.wake() });
    // A refusal destroys the body with its error, possibly before the upload has begun reading it
    // (and so listening): heard here, it never becomes an uncaught 'error' that ends the process.
    this.body.on('error', () => undefined);
    this.upload = start(this.body).catch((e: unknown) => {
      this.failure = { error: e };
      this.wake();
      throw e;
    });
    // Its failure is answered to the next WRITE or the CLOSE; until then nobody awaits it.
    this.upload.catch(() => undefined);
  }

  private wake(): void {
    const room = this.room;
    this.room = undefined;
    room?.();
  }

  private check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Pushes bytes at `sent`; waits while the body is full, so memory stays bounded by its buffer. */
  private async push(data: Buffer): Promise<void> {
    this.check();
    this.sent += data.length;
    if (data.length > 0 && !this.body.push(data)) {
      await new Promise<void>((resolve) => {
        this.room = resolve;
      });
      this.check();
    }
  }

  private async zeros(until: number): Promise<void> {
    while (this.sent < until) await this.push(ZEROS.subarray(0, Math.min(ZEROS.length, until - this.sent)));
  }

  /** The writes held ahead that now follow on; past MAX_AHEAD (or at the end) the holes are zeros. */
  private async flush(all: boolean): Promise<void> {
    while (this.ahead.size > 0) {
      const next = this.ahead.get(this.sent);
      if (next) {
        this.ahead.delete(this.sent);
        this.aheadBytes -= next.length;
        await this.push(next);
        continue;
      }
      if (!all && this.aheadBytes <= MAX_AHEAD) return;
      const first = Math.min(...this.ahead.keys());
      if (first < this.sent) throw this.refuse(behind());
      await this.zeros(first);
    }
  }

  async write(offset: number, data: Buffer): Promise<void> {
    this.check();
    if (offset < this.sent || (this.ahead.has(offset) && data.length > 0)) throw this.refuse(behind());
    this.size = Math.max(this.size, offset + data.length);
    if (offset === this.sent) await this.push(data);
    else if (data.length > 0) {
      this.ahead.set(offset, Buffer.from(data));
      this.aheadBytes += data.length;
    }
    await this.flush(false);
  }

  /** A size set through the handle: the size it has (sshfs truncates what it just created) or larger (zeros). */
  async truncate(size: number): Promise<void> {
    if (size < this.size) throw this.refuse(new AppError('method_not_allowed', 'A file being written in order cannot be cut shorter; open it for reading and writing to do that.'));
    this.size = size;
  }

  /** The close: what is held goes out, the body ends, and the upload makes the file (its failure thrown here). */
  async finish(): Promise<void> {
    this.check();
    await this.flush(true);
    await this.zeros(this.size);
    this.body.push(null);
    await this.upload;
  }

  /** A request this handle cannot honour: the file would not be what the client wrote, so the upload is given up (the close fails, nothing is stored). */
  private refuse(e: AppError): AppError {
    this.failure ??= { error: e };
    this.body.destroy(e);
    return e;
  }

  /** The client went away: the upload is given up and leaves nothing. */
  async abort(): Promise<void> {
    this.body.destroy(new Error('The SFTP client went away before closing the file.'));
    this.wake();
    await this.upload.catch(() => undefined);
  }
}

const behind = () => new AppError('method_not_allowed', 'This file is written in order: a write before what was sent needs the file opened for reading and writing.');

/**
 * A file open for reading: one ranged read of storage, pulled as the client's READs ask, so the
 * client's pace holds the storage read back (the stream buffers one high-water mark ahead). A READ
 * at another offset than the next one starts a new ranged read there.
 */
export class StreamedRead {
  private stream: Readable | undefined;
  private at = 0;
  constructor(
    readonly key: StorageKey,
    readonly entry: Entry,
    private readonly openAt: (start: number) => Promise<Readable>,
  ) {}

  async read(offset: number, length: number): Promise<Buffer | undefined> {
    if (offset >= this.entry.size) return undefined;
    if (!this.stream || offset !== this.at) {
      this.stream?.destroy();
      this.stream = await this.openAt(offset);
      this.at = offset;
    }
    const chunk = await take(this.stream, Math.min(length, this.entry.size - offset));
    if (chunk) this.at += chunk.length;
    return chunk;
  }

  close(): void {
    this.stream?.destroy();
    this.stream = undefined;
  }
}

/** Up to `n` bytes from a paused stream, or undefined at its end; what is left over stays in it. */
async function take(stream: Readable, n: number): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let have = 0;
  while (have < n) {
    const chunk = stream.read() as Buffer | null;
    if (chunk === null) {
      if (stream.readableEnded || stream.destroyed) break;
      const more = await new Promise<boolean>((resolve, reject) => {
        const done = () => {
          stream.off('readable', ready);
          stream.off('end', ended);
          stream.off('error', failed);
        };
        const ready = () => (done(), resolve(true));
        const ended = () => (done(), resolve(false));
        const failed = (e: Error) => (done(), reject(e));
        stream.once('readable', ready);
        stream.once('end', ended);
        stream.once('error', failed);
      });
      if (!more && stream.readableLength === 0) break;
      continue;
    }
    const want = n - have;
    if (chunk.length > want) {
      stream.unshift(chunk.subarray(want));
      parts.push(chunk.subarray(0, want));
      have = n;
    } else {
      parts.push(chunk);
      have += chunk.length;
    }
  }
  return have === 0 ? undefined : Buffer.concat(parts, have);
}
