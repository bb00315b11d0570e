import type { StorageKey } from '../domain/storage-path.js';
import type { Entry } from './entry.js';

/** The item a copy comes from and where it goes. */
export type CopyOf = { readonly from: StorageKey; readonly to: StorageKey };

/**
 * What changed in storage, reported by the backend after the change is
 * visible. Sizes are bytes of files as the backend's SizeView shows them
 * (the plaintext's under encryption at rest, src/storage/size-view.ts; a
 * folder's are the sum of the files it held), so usage can be kept from
 * events alone; search and thumbnails use the keys.
 */
export type StorageEvent =
  | {
      readonly type: 'created';
      readonly key: StorageKey;
      readonly isFile: boolean;
      readonly size: number;
      /** Came back from the owner's trash: its bytes were counted all along (src/services/trash.ts). */
      readonly kept?: boolean;
      /** A written file as its writer read it right after the commit, while it still held the name: a listener needs no stat of its own. */
      readonly entry?: Entry;
      /**
       * Folders on the way to key that the write made (the index held none there when it looked),
       * the innermost last, as stat shows them: the last `madeFolders.length` folders above key. A
       * listener needs no look of its own at storage for them.
       */
      readonly madeFolders?: readonly Entry[];
      /**
       * The writer asked the index about every folder above key just before it wrote (an object
       * store's writes, where the index is the authority on names): the ones it did not find are
       * madeFolders, the others were there, so a listener asks no one about them.
       */
      readonly parentsLooked?: boolean;
      /** The written file's SHA-256 (hex), hashed as its bytes came in (src/storage/hashing.ts). */
      readonly sha256?: string;
      /** Made by a copy of `from` onto `to` (this key is `to` or below it): its files are their sources' bytes. */
      readonly copyOf?: CopyOf;
    }
  | { readonly type: 'replaced'; readonly key: StorageKey; readonly size: number; readonly previousSize: number; readonly entry?: Entry; readonly sha256?: string; readonly copyOf?: CopyOf }
  | {
      readonly type: 'deleted';
      readonly key: StorageKey;
      readonly isFile: boolean;
      readonly size: number;
      /** Moved into the owner's trash, not destroyed: gone for every reader, its bytes still the owner's. */
      readonly kept?: boolean;
    }
  | {
      readonly type: 'moved';
      readonly from: StorageKey;
      readonly to: StorageKey;
      readonly isFile: boolean;
      /** Bytes of what was at `to` and is gone now (overwrite), 0 if nothing was. */
      readonly replacedSize: number;
    };

/**
 * A listener may return a promise (any other value is ignored): the storage operation then returns only
 * after it settled, so an index kept from events (search, usage) is up to
 * date when the client gets its answer.
 */
export type StorageListener = (event: StorageEvent) => unknown;

export interface StorageEvents {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: StorageListener): () => void;
}

/**
 * The backends' side of StorageEvents. Listeners start synchronously after
 * the change; `emit` resolves when the promises they returned have settled.
 * One that throws or rejects is reported to `onListenerError` and never
 * fails the storage operation that already happened.
 */
export function createEventHub(onListenerError: (e: unknown) => void = () => undefined): StorageEvents & { emit(event: StorageEvent): Promise<void> } {
  const listeners = new Set<StorageListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async emit(event) {
      const pending: Promise<void>[] = [];
      for (const l of listeners) {
        try {
          const r = l(event);
          if (r instanceof Promise) pending.push(r.then(() => undefined, onListenerError));
        } catch (e) {
          onListenerError(e);
        }
      }
      if (pending.length > 0) await Promise.all(pending);
    },
  };
}
