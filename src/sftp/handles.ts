import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
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
