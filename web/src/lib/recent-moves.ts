import type { Segments } from '../api/paths';

/** How many recent move destinations the picker offers. */
const KEEP = 5;
const keyOf = (user: string) => `file-cloud.recent-moves.${user}`;

/** The folders this user last moved things into, newest first (kept in this browser only). */
export function recentMoves(user: string): Segments[] {
  try {
    const v: unknown = JSON.parse(localStorage.getItem(keyOf(user)) ?? '[]');
    return Array.isArray(v) ? v.filter((p): p is string[] => Array.isArray(p) && p.every((s) => typeof s === 'string')).slice(0, KEEP) : [];
  } catch {
    return [];
  }
}

/** Puts `to` first in the user's recent destinations. */
export function rememberMove(user: string, to: Segments): void {
  const same = (p: Segments) => p.length === to.length && p.every((s, i) => s === to[i]);
  const next = [[...to], ...recentMoves(user).filter((p) => !same(p))].slice(0, KEEP);
  try {
    localStorage.setItem(keyOf(user), JSON.stringify(next));
  } catch {
    // Storage full or disabled: the picker just offers no recents.
  }
}
