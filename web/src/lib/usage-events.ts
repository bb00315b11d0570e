/**
 * "Storage may have changed": announced when a folder listing (re)loads, which
 * follows every upload, delete, move and save, so the usage bar refreshes
 * without each action knowing about it; and by what changes usage with no
 * listing on screen to reload (an upload into another folder than the one
 * shown, the trash emptied).
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
