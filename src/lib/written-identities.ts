import { AsyncLocalStorage } from 'node:async_hooks';

/** What the index wrote for a file: its stable id, its SHA-256 (null until known), the ETag they go with. */
export type WrittenIdentity = { readonly id: string | null; readonly sha256: string | null; readonly etag: string | null };

/**
 * The identities the index wrote while a PUT was served, by user and path. The PUT's answer names
 * each written file's id and hash (docs/api.md "Sync fields"); the index's listener of storage
 * events (src/services/search.ts) has them in hand when its transaction commits, so the answer
 * needs no read of the rows just written (on PostgreSQL a round trip per upload). It travels with
 * the request's async context, as the write's origin does (write-origin.ts).
 */
const current = new AsyncLocalStorage<Map<string, WrittenIdentity>>();

const keyOf = (user: string, path: string) => `${user}\0${path}`;

/** Runs `fn` with a record of the identities its writes' index entries get. */
export function collectingWritten<T>(fn: () => T): T {
  return current.run(new Map(), fn);
}

/** Notes what the index just wrote at `path`; nothing outside collectingWritten. */
export function noteWritten(user: string, path: string, identity: WrittenIdentity): void {
  current.getStore()?.set(keyOf(user, path), identity);
}

/** What the index wrote at `path` while this request was served, if it was noted. */
export function writtenIdentity(user: string, path: string): WrittenIdentity | undefined {
  return current.getStore()?.get(keyOf(user, path));
}
