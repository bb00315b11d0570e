import { copyFile, link, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Days a file stays in the sync trash. */
export const SYNC_TRASH_DAYS = 30;

const day = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * Local files sync replaces or removes whose bytes the server does not hold, kept in the state
 * folder: `trash/<YYYY-MM-DD>/<path>`. A hard link when the state folder is on the same file system
 * (no copy), else a copy; the caller removes or replaces the original only afterwards.
 */
export class SyncTrash {
  constructor(readonly dir: string) {}

  async keep(abs: string, rel: string, now = new Date()): Promise<string> {
    let dest = join(this.dir, day(now), ...rel.split('/'));
    for (let n = 2; ; n++) {
      await mkdir(dirname(dest), { recursive: true });
      try {
        await link(abs, dest);
        return dest;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') {
          dest = join(this.dir, day(now), ...`${rel} (${n})`.split('/'));
          continue;
        }
        if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw e;
        await copyFile(abs, dest, 1 /* COPYFILE_EXCL */);
        return dest;
      }
    }
  }

  /** Removes the days older than SYNC_TRASH_DAYS. */
  async purge(now = new Date()): Promise<void> {
    const oldest = day(new Date(now.getTime() - SYNC_TRASH_DAYS * 86_400_000));
    const days = await readdir(this.dir).catch(() => [] as string[]);
    for (const d of days) if (/^\d{4}-\d{2}-\d{2}$/.test(d) && d < oldest) await rm(join(this.dir, d), { recursive: true, force: true });
  }
}
