/**
 * Which of an owner's kept bytes (old versions and trashed items) an upload
 * that does not fit may purge (CONTRACT "Trash and versions": purged oldest
 * first when an upload needs the room; docs/security.md "The owner's safety
 * net"). Versions and trash are one list, oldest first, whatever their kind:
 * a day-old version is never lost while a month-old trashed file stays.
 *
 * The decision is taken before anything is purged: the plan is the shortest
 * oldest-first run whose bytes cover `needed`, or nothing at all when even
 * every kept byte would not make the upload fit (purging then would lose the
 * owner's files and still answer 507).
 *
 * Each kind comes from its own store query, oldest first and cut at a limit;
 * where a list was cut, the merged order is only known up to that list's last
 * item (an item not fetched may come before later items of the other list).
 * `complete` says which lists hold every item; a plan that needs more than
 * the known part asks for more (`more`). Pure: table-driven tests cover it.
 */
export type Kept = { readonly kind: 'version' | 'trash'; readonly id: string; readonly at: number; readonly size: number };

export type PurgePlan =
  /** Purge these, in this order (their sizes cover what is needed). */
  | { readonly purge: readonly Kept[] }
  /** Every kept byte together would not make the upload fit: purge nothing. */
  | { readonly purge: undefined; readonly more: false }
  /** The lists were cut before the plan could be decided: fetch more of them and ask again. */
  | { readonly purge: undefined; readonly more: true };

const byAge = (a: Kept, b: Kept) => a.at - b.at || (a.kind === b.kind ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.kind === 'version' ? -1 : 1);

export function purgePlan(
  lists: { readonly versions: readonly Kept[]; readonly trash: readonly Kept[] },
  complete: { readonly versions: boolean; readonly trash: boolean },
  needed: number,
): PurgePlan {
  if (needed <= 0) return { purge: [] };
  const merged = [...lists.versions, ...lists.trash].sort(byAge);
  // Past the last item of a cut list, an unfetched item of that list may come first.
  const cutAt = [complete.versions ? undefined : lists.versions.at(-1), complete.trash ? undefined : lists.trash.at(-1)].filter((k): k is Kept => k !== undefined);
  const known = cutAt.length === 0 ? merged.length : Math.min(...cutAt.map((k) => merged.indexOf(k) + 1));
  let sum = 0;
  for (let i = 0; i < known; i++) {
    sum += (merged[i] as Kept).size;
    if (sum >= needed) return { purge: merged.slice(0, i + 1) };
  }
  return known === merged.length && cutAt.length === 0 ? { purge: undefined, more: false } : { purge: undefined, more: true };
}
