import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { copyName } from '../lib/copy-names';

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
 * Moves entries of `from` into `to`, as the Move dialog and a drag onto a
 * folder both do, so they give the same results and the same sentences.
 * `error` is set when nothing moved (then the caller shows it where the user
 * acted); `toast` says what happened otherwise.
 */
export async function moveEntries(storage: StorageApi, from: Segments, entries: readonly Entry[], to: Segments): Promise<{ moved: number; error: string | null; toast: string | null }> {
  const { failed, message } = await runAll(entries, (e) => storage.move([...from, e.name], [...to, e.name]));
  const moved = entries.length - failed.length;
  const where = `“${to[to.length - 1] ?? 'My files'}”`;
  if (moved === 0) return { moved, error: `Could not move ${failed.join(', ')}. ${message}`, toast: null };
  if (failed.length) return { moved, error: null, toast: `Moved ${moved}; not moved: ${failed.join(', ')}. ${message}` };
  return { moved, error: null, toast: `Moved ${entries.length === 1 ? `“${entries[0]?.name}”` : `${entries.length} items`} to ${where}.` };
}

/**
 * Copies entries of `from` into `to` (the Copy dialog: any folder, this one
 * too), each under a name free there (`report (1).txt` when `report.txt` is
 * taken), so nothing is replaced. Says what happened as moveEntries does.
 */
export async function copyEntries(storage: StorageApi, from: Segments, entries: readonly Entry[], to: Segments): Promise<{ copied: number; error: string | null; toast: string | null }> {
  const taken = new Set((await storage.list(to)).map((e) => e.name));
  // Names are chosen up front, one after another, so two copies never pick the same free name.
  const names = new Map(entries.map((e) => {
    const name = copyName(e.name, e.is_file, taken);
    taken.add(name);
    return [e.name, name];
  }));
  const { failed, message } = await runAll(entries, (e) => storage.copy([...from, e.name], [...to, names.get(e.name) ?? e.name]));
  const copied = entries.length - failed.length;
  const where = `“${to[to.length - 1] ?? 'My files'}”`;
  if (copied === 0) return { copied, error: `Could not copy ${failed.join(', ')}. ${message}`, toast: null };
  if (failed.length) return { copied, error: null, toast: `Copied ${copied}; not copied: ${failed.join(', ')}. ${message}` };
  const one = entries.length === 1 ? entries[0] : undefined;
  const renamed = one && names.get(one.name) !== one.name ? ` as “${names.get(one.name)}”` : '';
  return { copied, error: null, toast: `Copied ${one ? `“${one.name}”` : `${entries.length} items`} to ${where}${renamed}.` };
}

/** A ten-minute path token for `path` (the server's default when its limit is shorter): enough to start a download. */
async function shortToken(storage: StorageApi, path: Segments): Promise<string> {
  try {
    return (await storage.makeToken(path, 600)).token;
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 400)) throw e;
    return (await storage.makeToken(path)).token;
  }
}

/** Lets the browser download `href` as `name` (an <a download>: no page change, no new tab). */
export function saveAs(href: string, name: string): void {
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

/**
 * Downloads files with `?download=1` through short-lived path tokens (a link
 * cannot carry the Authorization header), one after another so the browser
 * treats them as separate downloads.
 */
export async function startDownloads(storage: StorageApi, folder: Segments, files: readonly Entry[]): Promise<void> {
  for (const [i, f] of files.entries()) {
    const path = [...folder, f.name];
    saveAs(storage.tokenUrl(path, await shortToken(storage, path), true), f.name);
    if (i < files.length - 1) await new Promise((r) => setTimeout(r, 400));
  }
}

/**
 * Downloads a folder as one zip, or only the `names` of its entries: a path
 * token for that folder goes in the URL (`?zip=1[&name=…]&token=…`), never
 * the access token. The zip is named after the folder.
 */
export async function startZipDownload(storage: StorageApi, folder: Segments, names?: readonly string[]): Promise<void> {
  const token = await shortToken(storage, folder);
  saveAs(storage.zipUrl(folder, token, names), `${folder[folder.length - 1] ?? storage.user}.zip`);
}
