import type { FastifyReply } from 'fastify';
import type { StorageKey } from '../domain/storage-path.js';
import { listingStream, type SyncFields } from '../http/listing-json.js';
import type { ListedEntry } from '../storage/backend.js';
import type { PrincipalOperations } from '../services/operations.js';

/** What a listing reads, as the principal (the operation layer asks `decide` for the folder). */
export type ListingReader = Pick<PrincipalOperations, 'folderEtag' | 'listSorted' | 'identities'>;

/**
 * Answers a folder's JSON listing (`/storage/`, `/share/`, a WebDAV
 * collection's GET): streamed, in the contract's order, the same bytes as
 * `JSON.stringify({ entries })` and sent chunked.
 *
 * An error before the first page (a missing folder, the store unreachable)
 * is thrown here and answered as the contract's JSON error. A storage error
 * after the status line was sent cannot become one: Fastify logs it and
 * destroys the response, so the client sees a connection closed before the
 * chunked body's end, never a truncated body passed off as a success.
 */
export async function sendListing(reply: FastifyReply, files: ListingReader, key: StorageKey, withBody: boolean, opts: { sync?: boolean } = {}): Promise<FastifyReply> {
  reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8');
  // The folder's tree ETag (it changes with anything beneath): a sync client skips an unchanged subtree by it.
  const etag = await files.folderEtag(key).catch(() => undefined);
  if (etag) reply.header('etag', etag);
  if (!withBody) return reply.send();
  const pages = await files.listSorted(key);
  return reply.send(listingStream(opts.sync ? withSyncFields(files, key, pages) : pages));
}

/**
 * How far the index's time of a file may be from the time a listing shows for the same bytes: on S3
 * a new file's entry is dated by its PutObject answer, which can be a second off the object's own
 * date until a rescan corrects it (docs/storage.md, "Dates of new files").
 */
const DATE_SKEW_MS = 1000;

/** Whether the index's row is of the bytes a listing shows: the same kind, and for a file the same size and time (within DATE_SKEW_MS). */
export function indexHolds(row: { readonly isFile: boolean; readonly size: number; readonly modified: number }, e: { readonly isFile: boolean; readonly size: number; readonly modified: Date }): boolean {
  return row.isFile === e.isFile && (!e.isFile || (row.size === e.size && Math.abs(row.modified - e.modified.getTime()) <= DATE_SKEW_MS));
}

/**
 * Each entry with the index's id, and a file's SHA-256 and ETag (null unless the index holds them
 * for the entry's size and time as listed: one indexed read per page, no storage call).
 */
async function* withSyncFields(files: ListingReader, dir: StorageKey, pages: AsyncIterable<ListedEntry[]>): AsyncGenerator<(ListedEntry & { sync: SyncFields })[]> {
  const prefix = dir.segments.join('/');
  const pathOf = (name: string) => (prefix === '' ? name : `${prefix}/${name}`);
  for await (const page of pages) {
    const known = await files.identities(dir, page.map((e) => pathOf(e.name)));
    yield page.map((e) => {
      const row = known.get(pathOf(e.name));
      const same = row !== undefined && indexHolds(row, e);
      return { ...e, sync: { id: row?.id ?? null, sha256: same ? row.sha256 : null, etag: same ? row.etag : null } };
    });
  }
}
