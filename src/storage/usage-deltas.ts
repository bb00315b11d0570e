import type { StorageEvent } from './events.js';

/** A change of one user's used bytes. */
export type UsageDelta = { readonly user: string; readonly delta: number };

/**
 * What a storage event does to usage. Sizes in events are file bytes (a
 * folder's are those of the files it held), so: created adds, deleted
 * subtracts, replaced adds the difference, and a move within a user only
 * loses what it overwrote. Zero changes are left out.
 */
export function usageDeltas(event: StorageEvent): UsageDelta[] {
  const one = (user: string, delta: number): UsageDelta[] => (delta === 0 ? [] : [{ user, delta }]);
  switch (event.type) {
    case 'created':
      // Back from the trash: the trash counts against the owner's quota, so the bytes never left usage.
      return event.kept ? [] : one(event.key.user, event.size);
    case 'replaced':
      return one(event.key.user, event.size - event.previousSize);
    case 'deleted':
      return event.kept ? [] : one(event.key.user, -event.size);
    case 'moved':
      // Moves never cross users (the service refuses it), so the moved bytes stay where they were counted.
      return one(event.to.user, -event.replacedSize);
  }
}
