import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A cached answer: the image's bytes, or `none` when the file is known not to be drawable. */
export type Cached = { readonly kind: 'image'; readonly data: Buffer } | { readonly kind: 'none' };

/** How the answer was had: drawn by this request, found in the cache, or shared with a request already drawing it. */
export type Outcome = 'generated' | 'cached' | 'waited';

const LOCK_STALE_MS = 120_000;
const POLL_MS = 40;
const WAIT_LIMIT_MS = 180_000;

/**
 * Thumbnails on local disk, outside every user's folder (data/cache/thumbnails/,
 * CONTRACT "Data directory"), one file per cache name in 256 sub-folders.
 *
 * Each name is produced at most once per data directory: in this process by
 * single-flight (concurrent requests share one promise), and across the
 * worker processes that share the directory by a lock file created with
 * O_EXCL; the others poll for the result. A lock left by a killed process is
 * taken over once it is older than LOCK_STALE_MS. Results appear by rename,
 * so a reader never sees half a file.
 */
export function createDiskCache(dir: string) {
  const inflight = new Map<string, Promise<Cached>>();
  const pathOf = (name: string, ext: string) => join(dir, name.slice(0, 2), `${name}.${ext}`);

  async function lookup(name: string): Promise<Cached | undefined> {
    try {
      return { kind: 'image', data: await readFile(pathOf(name, 'webp')) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    try {
      await stat(pathOf(name, 'none'));
      return { kind: 'none' };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return undefined;
    }
  }

  async function store(name: string, value: Cached): Promise<void> {
    const final = pathOf(name, value.kind === 'image' ? 'webp' : 'none');
    const temp = `${final}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temp, value.kind === 'image' ? value.data : '');
      await rename(temp, final);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
  }

  /** Takes the lock, or says who holds it; a stale lock is removed and taken. */
  async function tryLock(lock: string): Promise<boolean> {
    try {
      const fh = await open(lock, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > LOCK_STALE_MS) await unlink(lock).catch(() => undefined);
    return false;
  }

  async function produceOnce(name: string, produce: () => Promise<Cached>): Promise<{ value: Cached; outcome: Outcome }> {
    await mkdir(join(dir, name.slice(0, 2)), { recursive: true });
    const lock = pathOf(name, 'lock');
    const deadline = Date.now() + WAIT_LIMIT_MS;
    for (;;) {
      if (await tryLock(lock)) {
        try {
          // Another process may have finished between our lookup and our lock.
          const found = await lookup(name);
          if (found) return { value: found, outcome: 'cached' };
          const value = await produce();
          await store(name, value);
          return { value, outcome: 'generated' };
        } finally {
          await unlink(lock).catch(() => undefined);
        }
      }
      // Another worker is drawing it: wait for its result (or for its lock to go, then try again).
      while (Date.now() < deadline) {
        await sleep(POLL_MS);
        const found = await lookup(name);
        if (found) return { value: found, outcome: 'cached' };
        const held = await stat(lock).then((s) => Date.now() - s.mtimeMs < LOCK_STALE_MS, () => false);
        if (!held) break;
      }
      if (Date.now() >= deadline) throw new Error(`waited ${WAIT_LIMIT_MS} ms for another process to draw a thumbnail`);
    }
  }

  return {
    dir,

    /**
     * The cached value of `name`, producing it with `produce` when missing.
     * A `produce` that throws stores nothing, and the error reaches every
     * request that shared it.
     */
    async get(name: string, produce: () => Promise<Cached>): Promise<{ value: Cached; outcome: Outcome }> {
      const running = inflight.get(name);
      if (running) return { value: await running, outcome: 'waited' };
      const found = await lookup(name);
      if (found) return { value: found, outcome: 'cached' };
      const again = inflight.get(name);
      if (again) return { value: await again, outcome: 'waited' };
      const job = produceOnce(name, produce);
      const shared = job.then((r) => r.value);
      inflight.set(name, shared);
      shared.catch(() => undefined);
      try {
        return await job;
      } finally {
        inflight.delete(name);
      }
    },

    /**
     * Keeps the cache under maxBytes by removing the oldest files first, and
     * removes temporary files and locks that crashed processes left.
     */
    async prune(maxBytes: number): Promise<{ removed: number; bytes: number }> {
      const files: { path: string; size: number; mtime: number }[] = [];
      let subdirs: string[];
      try {
        subdirs = await readdir(dir);
      } catch {
        return { removed: 0, bytes: 0 };
      }
      let removed = 0;
      for (const sub of subdirs) {
        const names = await readdir(join(dir, sub)).catch(() => [] as string[]);
        for (const n of names) {
          const p = join(dir, sub, n);
          const s = await stat(p).catch(() => undefined);
          if (!s) continue;
          if ((n.endsWith('.tmp') || n.endsWith('.lock')) && Date.now() - s.mtimeMs > LOCK_STALE_MS) {
            await rm(p, { force: true });
            removed++;
          } else if (n.endsWith('.webp') || n.endsWith('.none')) {
            files.push({ path: p, size: s.size, mtime: s.mtimeMs });
          }
        }
      }
      let bytes = files.reduce((a, f) => a + f.size, 0);
      files.sort((a, b) => a.mtime - b.mtime);
      for (const f of files) {
        if (bytes <= maxBytes) break;
        await rm(f.path, { force: true });
        bytes -= f.size;
        removed++;
      }
      return { removed, bytes };
    },
  };
}

export type DiskCache = ReturnType<typeof createDiskCache>;
