import type { ListedEntry } from '../storage/backend.js';

/**
 * Pages of a folder for the server-rendered front ends (/basic/, share pages), read from the
 * backend's sorted listing as a stream: only the page asked for (or the last one) is held, so a
 * visitor never makes the server hold a whole folder.
 */

/**
 * Page `asked` (1-based) of `size` entries, or the last page when it lies beyond the end; reading stops
 * one entry after it (which tells whether a next page exists). For anonymous visitors: no total is counted.
 */
export async function pageUpTo(listing: AsyncIterable<ListedEntry[]>, asked: number, size: number): Promise<{ entries: ListedEntry[]; number: number; hasNext: boolean }> {
  let seen = 0;
  let shown: ListedEntry[] = [];
  let current: ListedEntry[] = [];
  let hasNext = false;
  reading: for await (const listed of listing) {
    for (const e of listed) {
      if (seen === asked * size) {
        hasNext = true;
        break reading;
      }
      if (seen % size === 0) current = [];
      current.push(e);
      seen++;
      shown = current;
    }
  }
  return { entries: shown, number: Math.max(1, Math.ceil(seen / size)), hasNext };
}

/**
 * Page `asked` of `size` entries and the folder's total (a signed-in owner's page shows it): the whole listing
 * is read, holding only the page asked for and the latest one, shown when `asked` lies beyond the last.
 */
export async function pageCounting(listing: AsyncIterable<ListedEntry[]>, asked: number, size: number): Promise<{ wanted: ListedEntry[]; latest: ListedEntry[]; total: number }> {
  let total = 0;
  let wanted: ListedEntry[] = [];
  let latest: ListedEntry[] = [];
  for await (const listed of listing) {
    for (const e of listed) {
      if (total % size === 0) latest = [];
      latest.push(e);
      total++;
      if (Math.ceil(total / size) === asked) wanted = latest;
    }
  }
  return { wanted, latest, total };
}
