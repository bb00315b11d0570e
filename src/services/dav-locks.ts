import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { DavLock, DavLockRepo } from '../store/dav-locks.js';

/**
 * Lock timeouts (RFC 4918 §10.7): what a client gets when it asks for none, and the most it gets. The
 * cap is what a person editing a file would choose: a lock taken through a grant holds the owner's
 * own files against them, and a forgotten one should not outlast a day.
 */
export const DEFAULT_LOCK_SECONDS = 3600;
export const MAX_LOCK_SECONDS = 24 * 3600;

/** The first acceptable value of a Timeout header (`Second-600, Infinite`); `Infinite` and longer get the cap. */
export function parseTimeout(header: string | undefined): number {
  if (!header) return DEFAULT_LOCK_SECONDS;
  for (const part of header.split(',')) {
    const v = part.trim();
    if (/^infinite$/i.test(v)) return MAX_LOCK_SECONDS;
    const m = /^second-(\d{1,12})$/i.exec(v);
    if (m) return Math.min(MAX_LOCK_SECONDS, Math.max(1, Number(m[1])));
  }
  return DEFAULT_LOCK_SECONDS;
}

/**
 * What a write touches, for the lock check (RFC 4918 §7): the resource
 * itself (locks on it and depth-infinity locks above it), with `tree` also
 * everything below it (DELETE, MOVE's source, an overwritten destination),
 * and with `member` its parent's membership (creating, removing or renaming
 * an entry changes the parent collection, which a depth-0 lock on the
 * parent protects too).
 */
export type WriteScope = { readonly path: string; readonly tree?: boolean; readonly member?: boolean };

/** A resource's path below its owner ('' for the root), as locks and dead properties name it. */
export const resourcePath = (key: StorageKey): string => key.segments.join('/');

export const parentPath = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/** Live locks a write of these scopes must hold a token for, each once. */
export async function locksOver(repo: DavLockRepo, user: string, scopes: readonly WriteScope[], now: number): Promise<DavLock[]> {
  if (!(await repo.mayHold(user))) return [];
  const found = new Map<string, DavLock>();
  for (const s of scopes) {
    const sets = [repo.covering(user, s.path, now)];
    if (s.tree) sets.push(repo.within(user, s.path, now));
    if (s.member && s.path !== '') sets.push(repo.covering(user, parentPath(s.path), now));
    for (const lock of (await Promise.all(sets)).flat()) found.set(lock.token, lock);
  }
  return [...found.values()];
}

/**
 * Refuses a write unless the client submitted a token of every lock in its
 * way: for each locked resource, the exclusive lock's token or one of the
 * shared locks' tokens, taken by the same user. `423 Locked` otherwise.
 */
export function assertTokensHeld(locks: readonly DavLock[], submitted: ReadonlySet<string>, username: string): void {
  const byRoot = new Map<string, DavLock[]>();
  for (const l of locks) byRoot.set(l.path, [...(byRoot.get(l.path) ?? []), l]);
  for (const [path, group] of byRoot) {
    if (!group.some((l) => submitted.has(l.token) && l.principal === username)) {
      throw new AppError('locked', `"/${path}" is locked; send its lock token in an If header to change it.`);
    }
  }
}
