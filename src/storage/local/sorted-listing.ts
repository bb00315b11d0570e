import { lstatSync, type BigIntStats, type Dirent, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { sep } from 'node:path';
import { compareCodePoints } from '../../domain/names.js';
import type { Entry, ListedEntry } from '../backend.js';
import { inspect, type Node } from './confine.js';
import { entryFromStats } from './entry.js';
import { fromErrno } from './errno.js';

/**
 * How many entries are stat'ed before other requests get the event loop
 * (the stats are synchronous, see confine.ts): a few hundred microseconds.
 */
const STAT_BATCH = 256;

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The local disk's listSorted: the folder's entries in the contract's
 * listing order, in pages, with nothing but the names held for the whole
 * folder.
 *
 * Order before stats: `readdir` with file types tells folders from files,
 * so the names are sorted first (once) and each entry is stat'ed only when
 * its page is made. Symbolic links are resolved before the sort, under
 * confine.ts's rules, so a link to a folder inside the root sorts as a
 * folder and a link leading outside, dangling or looping is left out, as
 * list() does; so are sockets, FIFOs and devices. A file system that gives
 * no type (DT_UNKNOWN) gets the same inspection as a link.
 *
 * Between readdir and the stat of its page an entry may go (it is left
 * out, as list() leaves it out) or be replaced by something of another
 * kind; that one is left out too rather than shown where the order of its
 * old kind put it (a listing is not a snapshot; the next one shows it).
 *
 * Without `etags` the stats are plain numbers (no BigInts, no ETag), and
 * `modified` is the same millisecond `entryFromStats` gives: the float
 * `mtimeMs` truncated, except when it is a whole number, where rounding
 * may have carried a time just below a millisecond up to it, and the
 * exact BigInt stat decides.
 */
export async function* sortedEntries(root: string, dir: string, opts: { etags: boolean }): AsyncGenerator<ListedEntry[]> {
  // Only the sorted names stay for the whole listing (the Dirents go with sortedNames' frame).
  const { folders, files, resolved } = await sortedNames(root, dir);
  const base = dir.endsWith(sep) ? dir : dir + sep;
  const stat = opts.etags ? (name: string, isFile: boolean) => exactEntry(base, name, isFile) : (name: string, isFile: boolean) => listedEntry(base, name, isFile);
  for (const [names, isFile] of [[folders, false], [files, true]] as const) {
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      const page: ListedEntry[] = [];
      const end = Math.min(i + STAT_BATCH, names.length);
      for (let j = i; j < end; j++) {
        const name = names[j] as string;
        const link = resolved?.get(name);
        const entry = link ? entryFromStats(name, link.stats as BigIntStats) : stat(name, isFile);
        if (entry) page.push(entry);
      }
      yield page;
      await yieldToLoop();
    }
  }
}

/** The folder's names, folders and files apart, each in code-point order; links resolved under confine.ts's rules. */
async function sortedNames(root: string, dir: string): Promise<{ folders: string[]; files: string[]; resolved?: Map<string, Node> }> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    throw fromErrno(e, 'Listing the folder failed');
  }
  const folders: string[] = [];
  const files: string[] = [];
  // Links (and entries of unknown type), resolved before the sort; rare.
  let resolved: Map<string, Node> | undefined;
  let inspected = 0;
  for (const d of dirents) {
    if (d.isDirectory()) folders.push(d.name);
    else if (d.isFile()) files.push(d.name);
    else if (d.isSymbolicLink() || !(d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice())) {
      const node = await inspect(root, dir, d.name);
      if (node.kind === 'dir' || node.kind === 'file') {
        (resolved ??= new Map()).set(d.name, node);
        (node.kind === 'dir' ? folders : files).push(d.name);
      }
      if (++inspected % STAT_BATCH === 0) await yieldToLoop();
    }
  }
  folders.sort(compareCodePoints);
  files.sort(compareCodePoints);
  return { folders, files, resolved };
}

/** The kind an entry was sorted as must still be what is there (not a link, not the other kind). */
const sameKind = (s: Stats | BigIntStats, isFile: boolean) => (isFile ? s.isFile() : s.isDirectory());

function lstatOrGone<B extends boolean>(path: string, bigint: B): (B extends true ? BigIntStats : Stats) | undefined {
  try {
    // ENOENT (and ENOTDIR) give undefined: deleted since readdir.
    return lstatSync(path, { bigint, throwIfNoEntry: false }) as (B extends true ? BigIntStats : Stats) | undefined;
  } catch (e) {
    throw fromErrno(e, 'Inspecting an entry failed');
  }
}

function exactEntry(base: string, name: string, isFile: boolean): Entry | undefined {
  const s = lstatOrGone(base + name, true);
  return s && sameKind(s, isFile) ? entryFromStats(name, s) : undefined;
}

function listedEntry(base: string, name: string, isFile: boolean): ListedEntry | undefined {
  const s = lstatOrGone(base + name, false);
  if (!s || !sameKind(s, isFile)) return undefined;
  // Whole: exact, or a time a hair below the next millisecond rounded up (see above).
  if (Number.isInteger(s.mtimeMs)) return exactEntry(base, name, isFile);
  return { name, isFile, size: s.size, modified: new Date(Math.trunc(s.mtimeMs)) };
}
