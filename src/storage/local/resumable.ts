import { createHash } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { StorageError, type Entry } from '../backend.js';
import { checkTailSize, checkUploadId, chunkBytes, MAX_TAIL_BYTES, isUploadId, type ChunkReading, type AppendOptions, type AppendResult, type ResumableStaging } from '../resumable.js';
import { errnoOf, fromErrno } from './errno.js';
import { RESUMABLE_DIR } from './staging.js';
import { commitStaged, type CommitHooks, type Dirs } from './write.js';

const TAIL = '.tail-';
const UPLOAD_ID_LENGTH = 36;

/** Bytes gathered before one positioned writev: few system calls, bounded memory. */
const WRITE_BATCH = 1024 * 1024;
/**
 * Without a checksum, the offset is made durable (fdatasync, then reported
 * to the caller, which records it) every so many bytes, so a crash loses at
 * most about this much of a long PATCH, and the sync that ends a PATCH has
 * little left to flush; a cut body is synced whole.
 */
const CHECKPOINT = 4 * 1024 * 1024;

/**
 * Resumable staging on local disk: one file per upload, `data/tmp/tus/<id>`,
 * on the storage's file system, so the last byte becomes the file by the
 * same rename/link commit as a PUT (no copy). Offsets are reported only
 * after fdatasync.
 */
export function createLocalResumable(dirs: Dirs, hooks: CommitHooks): ResumableStaging {
  const dir = join(dirs.tmpDir, RESUMABLE_DIR);
  const fileOf = (id: string) => {
    checkUploadId(id);
    return join(dir, id);
  };
  // Beside the staging file, named by upload and offset: `<id>.tail-<offset>`.
  const tailOf = (id: string, offset: number) => `${fileOf(id)}${TAIL}${offset}`;
  async function dropTails(id: string, keep?: number): Promise<void> {
    checkUploadId(id);
    const own = `${id}${TAIL}`;
    const kept = keep === undefined ? undefined : `${own}${keep}`;
    for (const name of await readdir(dir).catch(() => [])) if (name.startsWith(own) && name !== kept) await rm(join(dir, name), { force: true });
  }

  return {
    async create(id) {
      const file = fileOf(id);
      await mkdir(dir, { recursive: true });
      const handle = await open(file, 'wx').catch((e: unknown) => {
        throw fromErrno(e, 'Creating the upload staging failed');
      });
      await handle.sync().finally(() => handle.close());
    },

    async append(id, offset, body, opts) {
      const file = fileOf(id);
      let handle: FileHandle;
      try {
        handle = await open(file, 'r+');
      } catch (e) {
        throw fromErrno(e, 'Opening the upload staging failed');
      }
      try {
        // Bytes past the recorded offset were never reported (a crash between write and record): drop them.
        await handle.truncate(offset);
        return await appendTo(handle, offset, body, opts);
      } finally {
        await handle.close().catch(() => undefined);
      }
    },

    async commit(id, size, key, opts) {
      const file = fileOf(id);
      let handle: FileHandle;
      try {
        handle = await open(file, 'r');
      } catch (e) {
        // Only a commit removes the staging of an upload that still exists: renamed into place
        // (replace), or linked and then unlinked (rename).
        if (errnoOf(e) === 'ENOENT') return undefined;
        throw fromErrno(e, 'Opening the upload staging failed');
      }
      let stats;
      try {
        stats = await handle.stat({ bigint: true });
      } finally {
        await handle.close();
      }
      if (stats.nlink > 1n) {
        // Linked into the user's folder by a commit whose process died before removing this name.
        await rm(file, { force: true });
        return undefined;
      }
      if (Number(stats.size) !== size) throw new StorageError('failed', `The staged upload holds ${stats.size} bytes, not ${size}.`);
      // Linked, never moved: a commit cut short by a crash is told by the second link (above).
      const entry: Entry = await commitStaged(dirs, key, { path: file, movable: false, gone: false }, stats, opts.ifExists, hooks, opts.beforeReplace);
      // After a link the staging name still names the committed file: only the name goes.
      await rm(file, { force: true });
      return entry;
    },

    async remove(id) {
      await rm(fileOf(id), { force: true });
      await dropTails(id);
    },

    async list() {
      const latest = new Map<string, number>();
      for (const name of await readdir(dir).catch(() => [])) {
        // A tail left without its staging (a crash after the commit) is listed too, so the sweep removes it.
        const id = name.slice(0, UPLOAD_ID_LENGTH);
        if (!isUploadId(id) || (name.length > id.length && !name.startsWith(TAIL, id.length))) continue;
        const s = await lstat(join(dir, name)).catch(() => undefined);
        if (s) latest.set(id, Math.max(latest.get(id) ?? 0, s.mtimeMs));
      }
      return [...latest].map(([id, modified]) => ({ id, modified }));
    },

    async read(id, range) {
      let handle: FileHandle;
      try {
        handle = await open(fileOf(id), 'r');
      } catch (e) {
        throw fromErrno(e, 'Opening the upload staging failed');
      }
      try {
        const buf = Buffer.alloc(range.end - range.start + 1);
        const { bytesRead } = await handle.read(buf, 0, buf.length, range.start);
        return buf.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    },

    async putTail(id, offset, bytes) {
      checkTailSize(bytes);
      // Written aside and renamed over: a crash leaves the old record or the new one, never half of one.
      const final = tailOf(id, offset);
      const next = `${final}.new`;
      const handle = await open(next, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(next, final);
    },

    async getTail(id, offset) {
      try {
        const fh = await open(tailOf(id, offset), 'r');
        try {
          // One read of at most the bound (one over it tells a record that is not ours).
          const buf = Buffer.alloc(MAX_TAIL_BYTES + 1);
          const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
          if (bytesRead > MAX_TAIL_BYTES) throw new StorageError('too_large', 'An upload record is larger than any this server writes.');
          return buf.subarray(0, bytesRead);
        } finally {
          await fh.close();
        }
      } catch (e) {
        if (errnoOf(e) === 'ENOENT') return undefined;
        throw fromErrno(e, 'Reading the upload staging failed');
      }
    },

    dropTails,
  };
}

async function appendTo(handle: FileHandle, offset: number, body: Readable, opts: AppendOptions): Promise<AppendResult> {
  const hash = opts.sha1 ? createHash('sha1') : undefined;
  let written = offset;
  let durable = offset;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  // One fdatasync at a time runs in the background while more bytes arrive (as a PUT's do), so the
  // disk's flush overlaps the network; the offset it covers is reported only once it returned.
  let syncing: Promise<void> | undefined;
  let syncError: unknown;
  let syncedTo = offset;
  // One positioned writev in flight while the next batch is read from the network; `written`
  // counts the bytes whose write completed (what a sync may cover).
  let writing: Promise<void> | undefined;
  let writeError: unknown;
  let queued = offset;
  const write = async () => {
    await writing;
    if (writeError !== undefined) throw writeError;
    if (batchBytes === 0) return;
    const buffers = batch;
    const at = queued;
    const n = batchBytes;
    queued += n;
    batch = [];
    batchBytes = 0;
    // Settles without rejecting (the error is kept for the next write or flush): nothing waits on it meanwhile.
    writing = handle.writev(buffers, at).then(
      (r) => {
        if (r.bytesWritten !== n) writeError ??= new StorageError('failed', `Only ${r.bytesWritten} of ${n} bytes were written to the upload staging.`);
        else written = at + n;
      },
      (e: unknown) => {
        writeError ??= fromErrno(e, 'Writing the upload staging failed');
      },
    );
  };
  /** Every byte received so far written (not yet synced). */
  const flush = async () => {
    await write();
    await writing;
    if (writeError !== undefined) throw writeError;
  };
  const syncInBackground = () => {
    if (syncing || written === syncedTo) return;
    // Every write up to `written` has completed, so this sync covers them.
    const upto = written;
    syncedTo = upto;
    syncing = handle
      .datasync()
      .catch((e: unknown) => {
        throw fromErrno(e, 'Syncing the upload staging failed');
      })
      .then(async () => {
        durable = upto;
        // The caller's own failure (its record of the offset) passes through unchanged.
        await opts.onDurable?.(upto);
      })
      .catch((e: unknown) => {
        syncError ??= e;
      })
      .finally(() => {
        syncing = undefined;
      });
  };
  const settle = async () => {
    await syncing;
    if (syncError !== undefined) throw syncError;
  };
  // Back to the last recorded offset: the whole chunk with a checksum (nothing of it was recorded),
  // else only what was not yet reported (too many bytes).
  const rollback = async () => {
    await writing;
    await syncing;
    await handle.truncate(durable);
    await handle.datasync();
  };

  const reading: ChunkReading = { cut: false, received: 0 };
  for await (const bytes of chunkBytes(body, { maxBytes: opts.maxBytes, hash, dropChunk: rollback }, reading)) {
    batch.push(bytes);
    batchBytes += bytes.length;
    if (batchBytes >= WRITE_BATCH) await write();
    if (syncError !== undefined) await settle();
    if (!hash && written - syncedTo >= CHECKPOINT) syncInBackground();
  }
  const cut = reading.cut;
  await flush();
  await settle();
  if (hash && (cut || !hash.digest().equals(opts.sha1 as Buffer))) {
    await rollback();
    return { offset, outcome: cut ? 'cut' : 'checksum_mismatch' };
  }
  await flush();
  if (written !== durable) {
    await handle.datasync().catch((e: unknown) => {
      throw fromErrno(e, 'Syncing the upload staging failed');
    });
    durable = written;
    // With a checksum the caller records the offset from the result, once the chunk is known good.
    if (!hash) await opts.onDurable?.(durable);
  }
  return { offset: durable, outcome: cut ? 'cut' : 'complete' };
}
