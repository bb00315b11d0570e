import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A canonical description of everything under data/storage and data/tmp
 * (names, kinds, contents' SHA-256), for proving that a refused request
 * changed nothing on disk. The database is left out: refused requests may
 * legitimately touch nothing there either, but SQLite's WAL files change
 * on reads.
 */
export async function diskSnapshot(dataDir: string): Promise<string> {
  const lines: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      const r = `${rel}/${name}`;
      const st = await lstat(p);
      if (st.isDirectory()) {
        lines.push(`d ${r}`);
        await walk(p, r);
      } else if (st.isSymbolicLink()) {
        lines.push(`l ${r} -> ${await readlink(p)}`);
      } else {
        lines.push(`f ${r} ${createHash('sha256').update(await readFile(p)).digest('hex')}`);
      }
    }
  }
  await walk(join(dataDir, 'storage'), 'storage');
  await walk(join(dataDir, 'tmp'), 'tmp');
  return lines.join('\n');
}
