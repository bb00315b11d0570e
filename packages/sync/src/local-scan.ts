import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isUnder, sameStat, type BaseRecord, type LocalFile } from './tree.js';

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
  const kept = [];
  for (const d of entries) {
    if (rel === '' && d.name === MARKER) continue;
    if (isTempName(d.name)) {
      await rm(join(dir, d.name), { force: true });
      continue;
    }
    if (d.isDirectory() || d.isFile()) kept.push(d.name);
  }
  // The stats of a folder's entries are asked several at once (a stat waits on the disk, not the
  // CPU); the entries are then taken in name order, which decides between two names that are one.
  for (let i = 0; i < kept.length; i += STATS_AT_ONCE) {
    const names = kept.slice(i, i + STATS_AT_ONCE);
    const stats = await Promise.all(names.map((name) => lstat(join(dir, name)).catch(() => undefined)));
    for (const [k, name] of names.entries()) await addEntry(scan, root, join(dir, name), rel, diskRel, name, base, stats[k]);
  }
}

/** Stats in flight at once while a folder is scanned. */
const STATS_AT_ONCE = 32;

async function addEntry(scan: LocalScan, root: string, abs: string, rel: string, diskRel: string, name: string, base: ReadonlyMap<string, BaseRecord>, taken?: Stats): Promise<void> {
  const key = `${rel === '' ? '' : `${rel}/`}${name.normalize('NFC')}`;
  const onDisk = `${diskRel === '' ? '' : `${diskRel}/`}${name}`;
  const st = taken ?? (await lstat(abs).catch(() => undefined));
  if (!st || (!st.isDirectory() && !st.isFile())) return;
  if ((scan.files.has(key) || scan.dirs.has(key)) && (scan.names.get(key) ?? key) !== onDisk) {
    scan.skipped.push(`${onDisk}: not synced, ${scan.names.get(key) ?? key} has the same name once both are written as Unicode NFC; rename one`);
    return;
  }
  if (onDisk !== key) scan.names.set(key, onDisk);
  if (st.isDirectory()) {
    scan.dirs.add(key);
    await walkInto(scan, root, key, onDisk, base);
    return;
  }
  const b = base.get(key);
  const stamp = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs };
  // Unchanged since the base: the base's record is the file (no second object per file of a big folder).
  if (b && sameStat(b, stamp)) scan.files.set(key, b as LocalFile);
  else scan.files.set(key, { sha256: await sha256OfFile(abs), ...stamp, id: b?.id });
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
