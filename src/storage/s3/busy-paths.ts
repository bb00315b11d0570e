/**
 * The paths below a walked folder that a change of this deployment holds right now: an S3 change of
 * many keys (a folder's move or copy, its delete) is not atomic, and a rescan's walk that lists its
 * destination halfway would index the keys copied so far as new files (the change feed said
 * `created` for each, then `moved`). A rescan leaves such paths to the change's own event.
 *
 * `held` are the names of the edit leases held within the walked folder, `dirLease` the walked
 * folder's own edit lease name and `within` the prefix of the lease names below it (`dirLease/`).
 * 'all' when the folder itself is being changed. Pure.
 */
export function busyPaths(held: readonly string[], dirLease: string, within: string): string[] | 'all' {
  const paths: string[] = [];
  for (const name of held) {
    if (name === dirLease) return 'all';
    if (name.startsWith(within) && name.length > within.length) paths.push(name.slice(within.length));
  }
  return paths;
}

/** Whether `path` (segments below the walked folder) is at or below one of `busy`. Pure. */
export function isBusy(path: readonly string[], busy: ReadonlySet<string> | 'all'): boolean {
  if (busy === 'all') return true;
  if (busy.size === 0) return false;
  let at = '';
  for (const name of path) {
    at = at === '' ? name : `${at}/${name}`;
    if (busy.has(at)) return true;
  }
  return false;
}
