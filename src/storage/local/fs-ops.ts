import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import { nativeDisabled } from '../../lib/native-off.js';
import type { FileStats } from './entry.js';

/**
 * Two steps of an upload on local disk where native/fs-ops.c is built, the write one trip
 * through libuv's thread pool and the naming none (docs/performance.md, "One trip through the
 * thread pool"), and a read's open without the confinement walk (`openNoLinks`).
 *
 * A small body into a new staging file, durable before it gets a name: open
 * (a path: a new file, exclusive; a descriptor: a file created earlier),
 * write every chunk, fsync (a crash never leaves a named, torn file), fstat,
 * close; the file's stats. The descriptor is closed either way; the caller
 * removes the name on a failure. A failure is node:fs's system error
 * (`code`, `syscall`, `path`).
 *
 * Two implementations of the same steps: native/fs-ops.c runs them as one
 * job of libuv's thread pool; node:fs takes three trips through it (open,
 * writev, fsync; fstat and close run in place after the fsync), each a
 * wake-up of a pool thread and then of the event loop. The native one is
 * used when scripts/build-native.mjs built it, unless FILE_CLOUD_NATIVE_FS=0.
 */
export type DurableWrite = (target: string | number, chunks: readonly Buffer[]) => Promise<FileStats>;

/**
 * Gives `from`'s file the name `to` only while nothing is there, and `from` goes in the same step
 * (renameat2 with RENAME_NOREPLACE): true. false where this system cannot (no native module, or a
 * file system or kernel without it): the caller links instead and removes `from` itself. EEXIST,
 * and any other failure, throws as node:fs's error; both names then stay as they were.
 * Synchronous, as the lstats of the confinement walk are (confine.ts): a metadata step of
 * microseconds on a local disk, where a trip through the thread pool costs more than the step.
 */
export type RenameNoReplace = (from: string, to: string) => boolean;

type NativeStats = { ino: bigint; size: bigint; mtimeNs: bigint; mtimeMs: bigint; mode: number };
type NativeFs = {
  durableWrite(target: string | number, chunks: readonly Uint8Array[], done: (e: Error | null, s?: NativeStats) => void): void;
  renameNoReplaceSync(from: string, to: string): void;
  openNoLinksSync(path: string): number;
};

/** The module's place from dist/src/storage/local/ (compiled) up to the package root. */
const MODULE = '../../../../native/build/Release/fs_ops.node';

function load(): { native: NativeFs | undefined; why: string } {
  if (nativeDisabled(process.env.FILE_CLOUD_NATIVE_FS)) return { native: undefined, why: 'node:fs (FILE_CLOUD_NATIVE_FS=0)' };
  try {
    const native = createRequire(import.meta.url)(MODULE) as NativeFs;
    return typeof native.durableWrite === 'function' && typeof native.renameNoReplaceSync === 'function' && typeof native.openNoLinksSync === 'function'
      ? { native, why: 'native' }
      : { native: undefined, why: 'node:fs (native/ gave no durableWrite, renameNoReplaceSync or openNoLinksSync: built from older sources)' };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'MODULE_NOT_FOUND' ? 'is not built, scripts/build-native.mjs builds it' : `does not load: ${e instanceof Error ? e.message : String(e)}`;
    return { native: undefined, why: `node:fs (native/fs-ops.c ${why})` };
  }
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/** The native module's stats as the fields File Cloud reads of node:fs's bigint stats. */
const fromNative = (s: NativeStats): FileStats => ({ ino: s.ino, size: s.size, mtimeNs: s.mtimeNs, mtimeMs: s.mtimeMs, isFile: () => (s.mode & S_IFMT) === S_IFREG });

/** The native job, when the module is there. */
export function nativeDurableWrite(native: NativeFs): DurableWrite {
  return (target, chunks) => new Promise((resolve, reject) => native.durableWrite(target, chunks, (e, s) => (e ? reject(e) : resolve(fromNative(s as NativeStats)))));
}

/** The native renameat2; after its first EINVAL or ENOSYS (the data dir's file system cannot), false without asking again. */
export function nativeRenameNoReplace(native: NativeFs): RenameNoReplace {
  let unsupported = false;
  return (from, to) => {
    if (unsupported) return false;
    try {
      native.renameNoReplaceSync(from, to);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EINVAL' && code !== 'ENOSYS') throw e;
      unsupported = true;
      return false;
    }
  };
}

/**
 * The file at an absolute `path` opened for reading, when no component of the path is a symbolic
 * link (openat2 with RESOLVE_NO_SYMLINKS; O_NOFOLLOW, O_NONBLOCK): its descriptor. undefined for
 * anything else — a link on the way, nothing there, a file where a folder should be, or no openat2
 * here — for the caller to take the confinement walk (confine.ts), which says what is there. A
 * path made of a real user root and checked names that opens so is inside that root: no link can
 * lead out of it, not even one swapped in during the call.
 */
export type OpenNoLinks = (path: string) => number | undefined;

/** Where openat2 is refused as a call (an old kernel, a seccomp filter), not for this path. */
const NO_OPENAT2 = new Set([-os.constants.errno.ENOSYS, -os.constants.errno.EPERM, -os.constants.errno.EINVAL]);

/** The native openat2; after a refusal of the call itself, undefined without asking again. */
export function nativeOpenNoLinks(native: NativeFs): OpenNoLinks {
  let unsupported = false;
  return (path) => {
    if (unsupported) return undefined;
    const r = native.openNoLinksSync(path);
    if (r >= 0) return r;
    if (NO_OPENAT2.has(r)) unsupported = true;
    return undefined;
  };
}

/** Without the native module: always the walk. */
export const noOpenNoLinks: OpenNoLinks = () => undefined;

/** Without the native module: never moves; the caller links. */
export const noRenameNoReplace: RenameNoReplace = () => false;

/** The same steps on node:fs's callbacks (not a FileHandle, whose promises cost each upload more CPU). */
export const nodeDurableWrite: DurableWrite = async (target, chunks) => {
  const fd = typeof target === 'number' ? target : await new Promise<number>((resolve, reject) => fs.open(target, 'wx', (e, d) => (e ? reject(e) : resolve(d))));
  return new Promise((resolve, reject) => {
    const fail = (e: unknown) => fs.close(fd, () => reject(e));
    const write = (rest: readonly Buffer[]): void => {
      if (rest.length === 0) return fs.fsync(fd, (syncError) => (syncError ? fail(syncError) : stat()));
      fs.writev(fd, rest, (writeError, bytesWritten) => (writeError ? fail(writeError) : write(unwritten(rest, bytesWritten))));
    };
    // After the fsync, fstat reads the inode in memory and close has nothing left to flush: done in
    // place, they spare two trips through the thread pool.
    const stat = () => {
      let stats: FileStats;
      try {
        stats = fs.fstatSync(fd, { bigint: true });
      } catch (statError) {
        return fail(statError);
      }
      try {
        fs.closeSync(fd);
      } catch (closeError) {
        return reject(closeError);
      }
      resolve(stats);
    };
    write(chunks.filter((c) => c.length > 0));
  });
};

/** What is left of `chunks` after the first `written` bytes. */
function unwritten(chunks: readonly Buffer[], written: number): Buffer[] {
  const left: Buffer[] = [];
  for (const c of chunks) {
    if (written >= c.length) written -= c.length;
    else {
      left.push(written > 0 ? c.subarray(written) : c);
      written = 0;
    }
  }
  return left;
}

const loaded = load();
/** The implementations this process uses. */
export const durableWrite: DurableWrite = loaded.native ? nativeDurableWrite(loaded.native) : nodeDurableWrite;
export const renameNoReplace: RenameNoReplace = loaded.native ? nativeRenameNoReplace(loaded.native) : noRenameNoReplace;
export const openNoLinks: OpenNoLinks = loaded.native ? nativeOpenNoLinks(loaded.native) : noOpenNoLinks;
/** The native module, for its tests; undefined when node:fs runs. */
export const nativeFs: NativeFs | undefined = loaded.native;
/** Which implementation runs and, for node:fs, why: for run-tests' start line. */
export const durableWritePath: string = loaded.why;
