import { createHash } from 'node:crypto';
import { createReadStream, lstatSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isUnder, sameStat, toNfc, type BaseRecord, type LocalFile } from './tree.js';

/** The marker in the sync root: it says this is the folder that was synced (never synced itself). */
export const MARKER = '.file-cloud-sync';
/** Downloads are written under such a name in the target folder, then renamed into place. */
export const TEMP_PREFIX = '.fcsync-';
export const isTempName = (name: string): boolean => name.startsWith(TEMP_PREFIX) && name.endsWith('.tmp');

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** What a scan of the local folder finds. Keys are NFC, as on the server. */
export interface LocalScan {
  readonly files: Map<string, LocalFile>;
  /** Every folder below the root (not the root), empty or not. */
  readonly dirs: Set<string>;
  /**
   * The path on disk of an entry whose name is stored otherwise than its key: a name macOS wrote
   * decomposed (NFD), or a spelling the case-insensitive disk holds for the server's name. Only
   * such entries are listed; the others are their key.
   */
  readonly names: Map<string, string>;
  /** Names that another name here already takes (the same after NFC): not synced, and why. */
  readonly skipped: string[];
}

/**
 * The local tree. A file whose size, mtime, inode and ctime equal its base record keeps the base's hash;
 * only the others are read. Symbolic links and special files are not synced. A temp file a killed
 * download left behind is removed (it never had a real name).
 */
export async function scanFolder(root: string, base: ReadonlyMap<string, BaseRecord>): Promise<LocalScan> {
  const scan: LocalScan = { files: new Map(), dirs: new Set(), names: new Map(), skipped: [] };
  await walkInto(scan, root, '', '', base);
  return scan;
}

/** Adds what is in one folder (`rel` its key, `diskRel` its path on disk), and below it, to the scan. */
async function walkInto(scan: LocalScan, root: string, rel: string, diskRel: string, base: ReadonlyMap<string, BaseRecord>): Promise<void> {
  const dir = join(root, ...diskRel.split('/'));
  const entries = (await readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Taken in name order, which decides between two names that are one. The stats are synchronous: the
  // metadata of a folder just listed is in the kernel's cache, and a promise and a pool thread per
  // file cost three times the CPU (docs/performance.md, "Sync client"); each folder's listing still
  // lets other work in (continuous mode's watcher and feed).
  for (const d of entries) {
    if (rel === '' && d.name === MARKER) continue;
    if (isTempName(d.name)) {
      await rm(join(dir, d.name), { force: true });
      continue;
    }
    if (!d.isDirectory() && !d.isFile()) continue;
    const abs = join(dir, d.name);
    const pending = placeEntry(scan, rel, diskRel, d.name, base, lstatOf(abs));
    if (pending) await finishEntry(scan, root, abs, base, pending);
  }
}

/** The entry's stat, undefined when it is gone (or cannot be read). */
function lstatOf(abs: string): Stats | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** What placeEntry leaves to do: a folder to walk, a file to hash. */
type Pending = { readonly key: string; readonly onDisk: string; readonly st: Stats };

/**
 * Puts an entry whose stat tells all into the scan (a file unchanged since the base keeps the base's
 * record: no second object per file of a big folder); a folder or a file to read is left to finishEntry.
 */
function placeEntry(scan: LocalScan, rel: string, diskRel: string, name: string, base: ReadonlyMap<string, BaseRecord>, st: Stats | undefined): Pending | undefined {
  if (!st || (!st.isDirectory() && !st.isFile())) return undefined;
  const key = `${rel === '' ? '' : `${rel}/`}${toNfc(name)}`;
  const onDisk = `${diskRel === '' ? '' : `${diskRel}/`}${name}`;
  if ((scan.files.has(key) || scan.dirs.has(key)) && (scan.names.get(key) ?? key) !== onDisk) {
    scan.skipped.push(`${onDisk}: not synced, ${scan.names.get(key) ?? key} has the same name once both are written as Unicode NFC; rename one`);
    return undefined;
  }
  if (onDisk !== key) scan.names.set(key, onDisk);
  if (st.isDirectory()) {
    scan.dirs.add(key);
    return { key, onDisk, st };
  }
  const b = base.get(key);
  if (b && sameStat(b, st)) {
    scan.files.set(key, b as LocalFile);
    return undefined;
  }
  return { key, onDisk, st };
}

async function finishEntry(scan: LocalScan, root: string, abs: string, base: ReadonlyMap<string, BaseRecord>, { key, onDisk, st }: Pending): Promise<void> {
  if (st.isDirectory()) return walkInto(scan, root, key, onDisk, base);
  const stamp = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs };
  scan.files.set(key, { sha256: await sha256OfFile(abs), ...stamp, id: base.get(key)?.id });
}

async function addEntry(scan: LocalScan, root: string, abs: string, rel: string, diskRel: string, name: string, base: ReadonlyMap<string, BaseRecord>): Promise<void> {
  const pending = placeEntry(scan, rel, diskRel, name, base, lstatOf(abs));
  if (pending) await finishEntry(scan, root, abs, base, pending);
}

/**
 * Brings a scan up to date for the paths (on disk, relative to the root) that changed since: each is
 * stat'ed again (a folder walked again), one gone leaves the scan with all below it. What no path
 * names is taken as it was, so the cost follows the changes, not the folder's size.
 */
export async function rescanPaths(scan: LocalScan, root: string, base: ReadonlyMap<string, BaseRecord>, paths: Iterable<string>): Promise<void> {
  for (const changed of paths) {
    // A path in a folder the scan does not know yet: the folder (the topmost new one) is walked.
    const segs = changed.split('/');
    let onDisk = changed;
    for (let n = 1; n < segs.length; n++) {
      const above = segs.slice(0, n).join('/');
      if (!scan.dirs.has(above.normalize('NFC'))) {
        onDisk = above;
        break;
      }
    }
    const key = onDisk.normalize('NFC');
    for (let i = scan.skipped.length - 1; i >= 0; i--) if (isUnder(scan.skipped[i]!.slice(0, scan.skipped[i]!.indexOf(': not synced')), onDisk)) scan.skipped.splice(i, 1);
    if (key === '' || key === MARKER || isTempName(key.slice(key.lastIndexOf('/') + 1))) continue;
    for (const map of [scan.files, scan.names]) for (const p of [...map.keys()]) if (isUnder(p, key)) map.delete(p);
    for (const p of [...scan.dirs]) if (isUnder(p, key)) scan.dirs.delete(p);
    const i = onDisk.lastIndexOf('/');
    const [parentDisk, name] = i < 0 ? ['', onDisk] : [onDisk.slice(0, i), onDisk.slice(i + 1)];
    const parentKey = parentDisk.normalize('NFC');
    await addEntry(scan, root, join(root, ...onDisk.split('/')), parentKey, parentDisk, name, base);
  }
}

export async function scanLocal(root: string, base: ReadonlyMap<string, BaseRecord>): Promise<Map<string, LocalFile>> {
  return (await scanFolder(root, base)).files;
}

/** The path on disk of `rel` (a key): its longest listed prefix takes the name the disk holds. */
export function diskPath(names: ReadonlyMap<string, string>, rel: string): string {
  if (names.size === 0) return rel;
  for (let end = rel.length; end > 0; end = rel.lastIndexOf('/', end - 1)) {
    const onDisk = names.get(rel.slice(0, end));
    if (onDisk !== undefined) return onDisk + rel.slice(end);
  }
  return rel;
}
