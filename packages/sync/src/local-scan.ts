import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { sameStat, type BaseRecord, type LocalFile } from './tree.js';

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
  async function walk(dir: string, rel: string, diskRel: string): Promise<void> {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of entries) {
      const abs = join(dir, d.name);
      const key = `${rel === '' ? '' : `${rel}/`}${d.name.normalize('NFC')}`;
      const onDisk = `${diskRel === '' ? '' : `${diskRel}/`}${d.name}`;
      if (rel === '' && d.name === MARKER) continue;
      if (isTempName(d.name)) {
        await rm(abs, { force: true });
        continue;
      }
      if (!d.isDirectory() && !d.isFile()) continue;
      if (scan.files.has(key) || scan.dirs.has(key)) {
        scan.skipped.push(`${onDisk}: not synced, ${scan.names.get(key) ?? key} has the same name once both are written as Unicode NFC; rename one`);
        continue;
      }
      if (onDisk !== key) scan.names.set(key, onDisk);
      if (d.isDirectory()) {
        scan.dirs.add(key);
        await walk(abs, key, onDisk);
        continue;
      }
      const st = await lstat(abs).catch(() => undefined);
      if (!st?.isFile()) continue;
      const b = base.get(key);
      const stamp = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs };
      const sha256 = b && sameStat(b, stamp) ? b.sha256 : await sha256OfFile(abs);
      scan.files.set(key, { sha256, ...stamp, id: b?.id });
    }
  }
  await walk(root, '', '');
  return scan;
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
