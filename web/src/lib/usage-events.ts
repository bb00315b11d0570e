/**
 * "Storage may have changed": announced when a folder listing (re)loads, which
 * follows every upload, delete, move and save, so the usage bar refreshes
 * without each action knowing about it.
 */
const EVENT = 'file-cloud:storage-changed';

export function announceStorageChange(): void {
  window.dispatchEvent(new Event(EVENT));
}

/** Calls `listener` on each announcement; returns the function that stops it. */
export function onStorageChange(listener: () => void): () => void {
  window.addEventListener(EVENT, listener);
  return () => window.removeEventListener(EVENT, listener);
}
