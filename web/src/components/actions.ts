import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';

/** Runs one request per entry, a few at a time; reports which failed and the first reason. */
export async function runAll(entries: readonly Entry[], fn: (e: Entry) => Promise<void>): Promise<{ failed: string[]; message: string }> {
  const failed: string[] = [];
  let message = '';
  const queue = [...entries];
  const worker = async () => {
    for (let e = queue.shift(); e; e = queue.shift()) {
      try {
        await fn(e);
      } catch (err) {
        failed.push(`“${e.name}”`);
        if (!message) message = err instanceof ApiError && err.code === 'already_exists' ? 'Something with the same name is already there.' : messageOf(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, entries.length) }, worker));
  return { failed, message };
}

/**
 * Downloads files with `?download=1` through short-lived path tokens (a link
 * cannot carry the Authorization header), one after another so the browser
 * treats them as separate downloads.
 */
export async function startDownloads(storage: StorageApi, folder: Segments, files: readonly Entry[]): Promise<void> {
  for (const [i, f] of files.entries()) {
    const path = [...folder, f.name];
    let token: string;
    try {
      token = (await storage.makeToken(path, 600)).token;
    } catch (e) {
      // The server's limit may be under ten minutes: take its default.
      if (!(e instanceof ApiError && e.status === 400)) throw e;
      token = (await storage.makeToken(path)).token;
    }
    const a = document.createElement('a');
    a.href = storage.tokenUrl(path, token, true);
    a.download = f.name;
    a.rel = 'noopener';
    document.body.appendChild(a);
    a.click();
    a.remove();
    if (i < files.length - 1) await new Promise((r) => setTimeout(r, 400));
  }
}
