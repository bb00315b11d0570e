/** A change as the Recent view reads it (GET /api/changes/recent), newest first. */
export type RecentEntry = { readonly type: 'created' | 'modified' | 'deleted' | 'moved'; readonly path: string; readonly from?: string; readonly is_file: boolean; readonly size?: number; readonly at: string };

/** One file of the Recent view: where it is now, and its newest change. */
export type RecentFile = { readonly owner: string; readonly folder: string[]; readonly name: string; readonly type: 'created' | 'modified' | 'moved'; readonly at: string; readonly size?: number };

const inside = (path: string, gone: string) => path === gone || path.startsWith(`${gone}/`);

/**
 * The files changed lately, each once at its newest change, newest first.
 * What was deleted or moved away afterwards (itself or a folder above it) is
 * not where an older entry says: it is left out, so every row opens a file
 * that is there.
 */
export function recentFiles(changes: readonly RecentEntry[]): RecentFile[] {
  const gone: string[] = [];
  const seen = new Set<string>();
  const out: RecentFile[] = [];
  for (const c of changes) {
    const hidden = gone.some((g) => inside(c.path, g));
    if (c.type === 'deleted') gone.push(c.path);
    if (c.type === 'moved' && c.from !== undefined) gone.push(c.from);
    if (c.type === 'deleted' || hidden || !c.is_file || seen.has(c.path)) continue;
    seen.add(c.path);
    const [owner = '', ...rest] = c.path.split('/').slice(1);
    const name = rest.pop() ?? '';
    out.push({ owner, folder: rest, name, type: c.type, at: c.at, ...(c.size === undefined ? {} : { size: c.size }) });
  }
  return out;
}
