import { Readable } from 'node:stream';
import type { ListedEntry } from '../storage/backend.js';

/** Characters per chunk of a streamed listing: a socket write of about 64 KiB (more with non-ASCII names). */
export const LISTING_CHUNK_CHARS = 64 * 1024;

/**
 * One entry of a folder listing, serialized directly: exactly the text
 * `JSON.stringify` gives for `{ is_file, name, size, modified }` (the name
 * goes through `JSON.stringify` itself, so its escaping is the same, lone
 * surrogates included; an ISO date holds nothing to escape).
 */
export function entryJson(e: ListedEntry & { sync?: SyncFields }): string {
  const base = `{"is_file":${e.isFile},"name":${JSON.stringify(e.name)},"size":${JSON.stringify(e.size)},"modified":"${e.modified.toISOString()}"`;
  if (!e.sync) return `${base}}`;
  const { id, sha256, etag } = e.sync;
  return `${base},"id":${JSON.stringify(id)}${e.isFile ? `,"sha256":${JSON.stringify(sha256)},"etag":${JSON.stringify(etag)}` : ''}}`;
}

/** What a listing of one's own (or a granted) folder adds for sync clients (docs/api.md "Sync fields"). */
export type SyncFields = { readonly id: string | null; readonly sha256: string | null; readonly etag: string | null };

/**
 * The listing answer `{"entries":[...]}` as text chunks of about `chunkChars`,
 * the same bytes as `JSON.stringify({ entries })`, made page by page so a
 * folder's answer never sits in memory whole.
 */
export async function* listingChunks(pages: AsyncIterable<readonly (ListedEntry & { sync?: SyncFields })[]>, chunkChars = LISTING_CHUNK_CHARS): AsyncGenerator<string> {
  let out = '{"entries":[';
  let first = true;
  for await (const page of pages) {
    for (const e of page) {
      if (first) {
        out += entryJson(e);
        first = false;
      } else {
        out += ',' + entryJson(e);
      }
      if (out.length >= chunkChars) {
        yield out;
        out = '';
      }
    }
  }
  yield out + ']}';
}

/** listingChunks as a byte stream (UTF-8), pulled as the client reads: a slow client holds back the storage. */
export const listingStream = (pages: AsyncIterable<readonly (ListedEntry & { sync?: SyncFields })[]>): Readable => Readable.from(listingChunks(pages), { objectMode: false });
