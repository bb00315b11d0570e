import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { copyName } from '../lib/copy-names';
import { t } from '../lib/i18n';

/** Runs one request per entry (anything with a name), a few at a time; reports which failed and the first reason. */
export async function runAll<T extends { readonly name: string }>(entries: readonly T[], fn: (e: T) => Promise<void>): Promise<{ failed: string[]; message: string }> {
  const failed: string[] = [];
  let message = '';
  const queue = [...entries];
  const worker = async () => {
    for (let e = queue.shift(); e; e = queue.shift()) {
      try {
        await fn(e);
      } catch (err) {
        failed.push(`“${e.name}”`);
        if (!message) message = err instanceof ApiError && err.code === 'already_exists' ? t('toast.sameName') : messageOf(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, entries.length) }, worker));
  return { failed, message };
}

/** What a move or a copy of entries came to: `error` when none went (shown where the user acted), else `toast`. */
export type Placed = { done: number; names: string[]; error: string | null; toast: string | null };

/**
 * Moves entries of `from` into `to`, as the Move dialog and a drag onto a
 * folder both do, so they give the same results and the same sentences.
 * `names` are those that moved.
 */
export const moveEntries = (storage: StorageApi, from: Segments, entries: readonly Entry[], to: Segments): Promise<Placed> => placeEntries('move', storage, from, entries, to);

/**
 * Copies entries of `from` into `to` (the Copy dialog: any folder, this one
 * too), each under a name free there (`report (1).txt` when `report.txt` is
 * taken), so nothing is replaced.
 */
export const copyEntries = (storage: StorageApi, from: Segments, entries: readonly Entry[], to: Segments): Promise<Placed> => placeEntries('copy', storage, from, entries, to);

async function placeEntries(verb: 'move' | 'copy', storage: StorageApi, from: Segments, entries: readonly Entry[], to: Segments): Promise<Placed> {
  // A copy's names are chosen up front, one after another, so two copies never pick the same free name.
  const taken = verb === 'copy' ? new Set((await storage.list(to)).map((e) => e.name)) : undefined;
  const target = new Map(entries.map((e) => {
    const name = taken ? copyName(e.name, e.is_file, taken) : e.name;
    taken?.add(name);
    return [e.name, name];
  }));
  const names: string[] = [];
  const { failed, message } = await runAll(entries, async (e) => {
    const dest = [...to, target.get(e.name) ?? e.name];
    await (verb === 'copy' ? storage.copy([...from, e.name], dest) : storage.move([...from, e.name], dest));
    names.push(e.name);
  });
  const done = names.length;
  const where = to[to.length - 1] ?? t('nav.myFiles');
  if (done === 0) return { done, names, error: t('toast.couldNot', { verb, names: failed.join(', '), message }), toast: null };
  if (failed.length) return { done, names, error: null, toast: t('toast.partly', { verb, done, names: failed.join(', '), message }) };
  const one = entries.length === 1 ? entries[0] : undefined;
  const renamed = one && target.get(one.name) !== one.name ? target.get(one.name) : undefined;
  const toast = one ? (renamed === undefined ? t('toast.placedOne', { verb, name: one.name, where }) : t('toast.placedOneAs', { verb, name: one.name, where, as: renamed })) : t('toast.placedMany', { verb, count: entries.length, where });
  return { done, names, error: null, toast };
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
