import { type StorageKey } from '../domain/storage-path.js';
import type { StorageBackend } from '../storage/backend.js';
import type { StorageEvent } from '../storage/events.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { resourcePath } from './dav-locks.js';

/**
 * WebDAV's records of an item (its locks and dead properties) follow what happens to the item, through
 * whichever front end it happens (the API, the web UI, /basic/, SFTP, WebDAV itself): a deleted item's
 * end with it; a moved item's dead properties go along inside one owner's tree (RFC 4918 §9.9.1) and its
 * locks end (§7.7: a lock does not move with its resource); what a move replaced loses its own. Without
 * this, an API move left the old name locked against every other WebDAV or SFTP writer, and a file made
 * there later showed the moved file's properties. Returns the function that stops following.
 */
export function followStorageForDav(store: MetadataStore, backend: StorageBackend): () => void {
  const forget = async (key: StorageKey) => {
    const path = resourcePath(key);
    await Promise.all([store.davLocks.deleteWithin(key.user, path), store.davProperties.deleteTree(key.user, path)]);
  };
  const onEvent = async (e: StorageEvent): Promise<void> => {
    if (e.type === 'deleted') return forget(e.key);
    if (e.type !== 'moved') return;
    const from = resourcePath(e.from);
    const to = resourcePath(e.to);
    await Promise.all([store.davLocks.deleteWithin(e.from.user, from), store.davLocks.deleteWithin(e.to.user, to)]);
    // moveTree drops the destination's own properties first (what the move replaced).
    if (e.from.user === e.to.user) await store.davProperties.moveTree(e.from.user, from, to);
    else await Promise.all([store.davProperties.deleteTree(e.from.user, from), store.davProperties.deleteTree(e.to.user, to)]);
  };
  return backend.events.subscribe(onEvent);
}
