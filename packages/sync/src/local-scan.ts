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

/**
 * The local tree. A file whose size, mtime, inode and ctime equal its base record keeps the base's hash;
 * only the others are read. Symbolic links and special files are not synced. A temp file a killed
 * download left behind is removed (it never had a real name).
 */
export async function scanLocal(root: string, base: ReadonlyMap<string, BaseRecord>): Promise<Map<string, LocalFile>> {
  const out = new Map<string, LocalFile>();
  async function walk(dir: string, rel: string): Promise<void> {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, d.name);
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (rel === '' && d.name === MARKER) continue;
      if (isTempName(d.name)) {
        await rm(abs, { force: true });
        continue;
      }
      if (d.isDirectory()) await walk(abs, path);
      else if (d.isFile()) {
        const st = await lstat(abs).catch(() => undefined);
        if (!st?.isFile()) continue;
        const b = base.get(path);
        const stamp = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs };
        const sha256 = b && sameStat(b, stamp) ? b.sha256 : await sha256OfFile(abs);
        out.set(path, { sha256, ...stamp, id: b?.id });
      }
    }
  }
  await walk(root, '');
  return out;
}
