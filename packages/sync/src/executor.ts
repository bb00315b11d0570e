import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Op } from './planner.js';
import { HttpError, type RemoteApi } from './remote-api.js';
import type { StateStore, SyncState } from './state-store.js';
import type { SyncTrash } from './sync-trash.js';
import { diskPath, TEMP_PREFIX } from './local-scan.js';
import { ancestorsOf, renameDirs, sameStat, type BaseRecord, type FileVersion, type LocalFile } from './tree.js';
import { reached, stopsAt } from './step-hook.js';
import { deletedAlready, etagOf, folderMovedAlready, movedAlready } from './server-now.js';

export interface ExecContext {
  readonly root: string;
  readonly api: RemoteApi;
  readonly store: StateStore;
  readonly state: SyncState;
  readonly trash: SyncTrash;
  /** The scan's names on disk that differ from their keys (NFD, another case). */
  readonly names?: ReadonlyMap<string, string> | undefined;
}

/** done: the step happened and the base says so; skipped: a side changed since the plan, the next round decides again. */
export type Outcome = 'done' | 'skipped';

const abs = (ctx: ExecContext, rel: string): string => join(ctx.root, ...diskPath(ctx.names ?? new Map(), rel).split('/'));

/** The local file is still exactly what was scanned (same size, mtime, inode, ctime); undefined expects nothing there. */
async function stillIs(path: string, expected: LocalFile | undefined): Promise<boolean> {
  const st = await lstat(path).catch(() => undefined);
  if (!expected) return st === undefined;
  return st !== undefined && st.isFile() && sameStat(st, expected);
}

/**
 * The server holds these bytes — as a current file, a file in the caller's server trash (by the
 * hash its listing gives), or a kept version of the file at `rel` — so a local copy of them is no loss.
 */
async function serverHolds(ctx: ExecContext, file: LocalFile, rel: string): Promise<boolean> {
  for (const v of ctx.state.remote.values()) if (v.sha256 === file.sha256) return true;
  return (await ctx.api.trashHolds(file.sha256, file.size)) || ctx.api.versionHolds(rel, file.sha256, file.size);
}

/** The server's folders that hold a file it now has at `rel`. */
function remoteParents(ctx: ExecContext, rel: string): [string, boolean][] {
  return ancestorsOf(rel)
    .filter((d) => !ctx.state.remoteDirs.has(d))
    .map((d) => [d, true]);
}

/** A folder made on one side is on both, and so are its parents: the base takes those it lacks. */
const newBaseDirs = (ctx: ExecContext, path: string): [string, boolean][] =>
  [...ancestorsOf(path), path].filter((d) => !ctx.state.baseDirs.has(d)).map((d): [string, boolean] => [d, true]);

const baseOf = (v: FileVersion, local: { mtimeMs: number; ino: number; ctimeMs?: number | undefined }): BaseRecord => ({
  sha256: v.sha256,
  size: v.size,
  id: v.id,
  mtimeMs: local.mtimeMs,
  ino: local.ino,
  ctimeMs: local.ctimeMs,
});

/** Records and forgets (the base only): one journal write for all of them, as a first sync of a tree both sides hold has one per file. */
export function recordAll(ctx: ExecContext, ops: readonly Extract<Op, { kind: 'record' | 'forget' }>[]): void {
  ctx.store.setMany(ctx.state, { base: ops.map((op) => [op.path, op.kind === 'record' ? baseOf(op.remote, op.local) : null]) });
}

export async function execute(ctx: ExecContext, op: Op): Promise<Outcome> {
  switch (op.kind) {
    case 'download':
      return download(ctx, op.path, op.remote, op.replaces);
    case 'upload':
      return upload(ctx, op.path, op.local, op.expect);
    case 'delete-local': {
      const file = abs(ctx, op.path);
      const held = await serverHolds(ctx, op.local, op.path);
      if (!(await stillIs(file, op.local))) return 'skipped';
      if (!held) await ctx.trash.keep(file, op.path);
      await unlink(file);
      ctx.store.setBase(ctx.state, op.path, null);
      return 'done';
    }
    case 'delete-remote': {
      const etag = await etagOf(ctx.api, op.path, op.expect);
      if (etag !== undefined && (await ctx.api.delete(op.path, etag))) reached('delete-remote:deleted', op.path);
      else if (!(await deletedAlready(ctx.api, op.path))) return 'skipped';
      ctx.store.setRemote(ctx.state, op.path, null);
      ctx.store.setBase(ctx.state, op.path, null);
      return 'done';
    }
    case 'move-local': {
      const from = abs(ctx, op.from);
      const to = abs(ctx, op.to);
      const base = ctx.state.base.get(op.from);
      if (!base || !(await stillIs(from, op.local)) || !(await stillIs(to, undefined))) return 'skipped';
      await mkdir(dirname(to), { recursive: true });
      await rename(from, to);
      reached('move-local:renamed', op.to);
      // A rename sets the ctime: the base takes the new one when it described the file, so the
      // next scan does not read it again (and an edit it did not describe still shows).
      const moved = sameStat(base, op.local) ? { ...base, ctimeMs: (await lstat(to)).ctimeMs } : base;
      ctx.store.setBase(ctx.state, op.to, moved);
      ctx.store.setBase(ctx.state, op.from, null);
      return 'done';
    }
    case 'move-remote': {
      const base = ctx.state.base.get(op.from);
      if (!base) return 'skipped';
      const etag = await etagOf(ctx.api, op.from, op.expect);
      // A moved object may answer with another ETag (an object store copies it): learn it anew.
      let now: FileVersion | undefined = { ...op.expect, etag: undefined };
      if (etag !== undefined && (await ctx.api.move(op.from, op.to, etag))) reached('move-remote:moved', op.to);
      else now = await movedAlready(ctx.api, op);
      if (!now) return 'skipped';
      ctx.store.setMany(ctx.state, {
        remote: [
          [op.to, now],
          [op.from, null],
        ],
        base: [
          [op.to, base],
          [op.from, null],
        ],
        remoteDirs: remoteParents(ctx, op.to),
      });
      return 'done';
    }
    case 'move-remote-folder': {
      const moved = await ctx.api.move(op.from, op.to, undefined);
      if (moved) reached('move-remote-folder:moved', op.to);
      else if (!(await folderMovedAlready(ctx.api, op.from, op.to, op.files))) {
        // The server's folder is not as planned (taken, gone): file by file instead, each checked.
        for (const f of op.files) await execute(ctx, f);
        return 'done';
      }
      const remote: [string, FileVersion | null][] = [];
      const base: [string, BaseRecord | null][] = [];
      for (const f of op.files) {
        remote.push([f.from, null], [f.to, { ...f.expect, etag: undefined }]);
        base.push([f.from, null], [f.to, ctx.state.base.get(f.from) ?? null]);
      }
      const baseDirs = new Set(ctx.state.baseDirs);
      const remoteDirs = new Set(ctx.state.remoteDirs);
      renameDirs(baseDirs, op.from, op.to);
      renameDirs(remoteDirs, op.from, op.to);
      ctx.store.setMany(ctx.state, { remote, base, baseDirs: dirChanges(ctx.state.baseDirs, baseDirs), remoteDirs: dirChanges(ctx.state.remoteDirs, remoteDirs) });
      // What the server had there that this client had not seen yet moved along: learn where it is.
      const now = await ctx.api.list(op.to);
      ctx.store.setMany(ctx.state, { remote: [...now] });
      return 'done';
    }
    case 'conflict': {
      // The local version steps aside under the conflict name; the next round uploads it there and
      // brings the server's version to the name.
      const file = abs(ctx, op.path);
      const copy = abs(ctx, op.copy);
      if (!(await stillIs(file, op.local)) || !(await stillIs(copy, undefined))) return 'skipped';
      await rename(file, copy);
      reached('conflict:renamed', op.copy);
      return 'done';
    }
    case 'record':
      ctx.store.setBase(ctx.state, op.path, baseOf(op.remote, op.local));
      return 'done';
    case 'forget':
      ctx.store.setBase(ctx.state, op.path, null);
      return 'done';
    case 'mkdir-local': {
      const dir = abs(ctx, op.path);
      const st = await lstat(dir).catch(() => undefined);
      if (st && !st.isDirectory()) return 'skipped'; // a file took the name meanwhile: decided again
      if (!st) await mkdir(dir, { recursive: true });
      ctx.store.setMany(ctx.state, { baseDirs: newBaseDirs(ctx, op.path) });
      return 'done';
    }
    case 'mkdir-remote':
      await ctx.api.mkdir(op.path);
      ctx.store.setMany(ctx.state, { remoteDirs: [...remoteParents(ctx, op.path), [op.path, true]], baseDirs: newBaseDirs(ctx, op.path) });
      return 'done';
    case 'rmdir-local':
      try {
        await rmdir(abs(ctx, op.path));
      } catch (e) {
        // Something was put in it since the scan: it stays, and the next round makes it over there.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return 'skipped';
      }
      ctx.store.setMany(ctx.state, { baseDirs: [[op.path, false]] });
      return 'done';
    case 'rmdir-remote': {
      const below = op.below ?? [];
      if (!(await ctx.api.rmdirIfEmpty(op.path, below, ctx.state.cursor))) return 'skipped';
      const gone = [op.path, ...below].map((d): [string, boolean] => [d, false]);
      ctx.store.setMany(ctx.state, { remoteDirs: gone, baseDirs: gone });
      return 'done';
    }
    case 'record-folder':
      ctx.store.setMany(ctx.state, { baseDirs: [[op.path, true]] });
      return 'done';
    case 'forget-folder':
      ctx.store.setMany(ctx.state, { baseDirs: [[op.path, false]] });
      return 'done';
  }
}

function dirChanges(before: ReadonlySet<string>, after: ReadonlySet<string>): [string, boolean][] {
  return [...[...before].filter((d) => !after.has(d)).map((d): [string, boolean] => [d, false]), ...[...after].filter((d) => !before.has(d)).map((d): [string, boolean] => [d, true])];
}

async function download(ctx: ExecContext, rel: string, remote: FileVersion, replaces: LocalFile | undefined): Promise<Outcome> {
  const file = abs(ctx, rel);
  await mkdir(dirname(file), { recursive: true });
  const got = await ctx.api.download(rel);
  if (!got) return 'skipped';
  const tmp = join(dirname(file), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}.tmp`);
  try {
    const hash = createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    await pipeline(got.body, tap, createWriteStream(tmp, { flags: 'wx', mode: 0o644 }));
    const fh = await open(tmp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    // The bytes must be the version the plan chose (a later version comes through the feed).
    if (hash.digest('hex') !== remote.sha256) return 'skipped';
    reached('download:fetched', rel);
    // Asked first, so nothing slow sits between the last look at the local file and the rename.
    const held = replaces === undefined || (await serverHolds(ctx, replaces, rel));
    // A local write since the scan is never overwritten: decided again next round (syncthing #3742).
    if (!(await stillIs(file, replaces))) return 'skipped';
    if (!held) await ctx.trash.keep(file, rel);
    await rename(tmp, file);
    reached('download:placed', rel);
    const st = await lstat(file);
    ctx.store.setMany(ctx.state, { remote: got.etag && got.etag !== remote.etag ? [[rel, { ...remote, etag: got.etag }]] : [], base: [[rel, baseOf(remote, st)]] });
    return 'done';
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function upload(ctx: ExecContext, rel: string, local: LocalFile, expect: FileVersion | undefined): Promise<Outcome> {
  const file = abs(ctx, rel);
  let cond: { ifMatch: string } | { ifNoneMatch: true } = { ifNoneMatch: true };
  if (expect) {
    const etag = await etagOf(ctx.api, rel, expect);
    if (etag === undefined) return 'skipped';
    cond = { ifMatch: etag };
  }
  if (!(await stillIs(file, local))) return 'skipped';
  // Exactly the scanned size is read: bytes a writer appends meanwhile make the digest differ, and
  // the server refuses them, rather than overrunning the declared length.
  const read = local.size === 0 ? Readable.from([]) : createReadStream(file, { end: local.size - 1 });
  const body = stopsAt('upload:sending') ? Readable.from(stopAfterFirstChunk(read, rel)) : read;
  let stored: FileVersion | undefined;
  try {
    stored = await ctx.api.upload(rel, body, local.size, local.sha256, cond);
  } catch (e) {
    // A file cut shorter while it was read ends the body early: written meanwhile, decided again next round.
    if (e instanceof HttpError || (await stillIs(file, local))) throw e;
    return 'skipped';
  }
  if (!stored) {
    // A new name that is taken: if it already holds these bytes (an earlier run's upload whose
    // answer was lost), that is the same as done.
    return adopt(ctx, rel, local);
  }
  reached('upload:stored', rel);
  ctx.store.setMany(ctx.state, { remote: [[rel, stored]], base: [[rel, baseOf(stored, local)]], remoteDirs: remoteParents(ctx, rel) });
  return 'done';
}

async function* stopAfterFirstChunk(body: Readable, rel: string): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of body) {
    yield chunk as Buffer;
    if (first) reached('upload:sending', rel);
    first = false;
  }
}

async function adopt(ctx: ExecContext, rel: string, local: LocalFile): Promise<Outcome> {
  const v = await ctx.api.stat(rel);
  if (!v) return 'skipped';
  if (v.sha256 !== local.sha256) {
    // Other bytes hold the name, and this client did not know them: most often its own upload whose
    // answer was lost with a killed run (the feed's echo of it is skipped as the client's own), the
    // file edited here since. Known now, so the next round plans on both versions (a conflict copy),
    // instead of trying this upload round after round.
    ctx.store.setMany(ctx.state, { remote: [[rel, v]], remoteDirs: remoteParents(ctx, rel) });
    return 'skipped';
  }
  ctx.store.setMany(ctx.state, { remote: [[rel, v]], base: [[rel, baseOf(v, local)]] });
  return 'done';
}
