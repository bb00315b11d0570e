/** Someone an item can be shared with, as the grants API names them: `user:<name>` or `group:<name>`. */
export type Recipient = { readonly kind: 'user' | 'group'; readonly name: string };

/** The grants API's name of a recipient. */
export const recipientTo = (r: Recipient): string => `${r.kind}:${r.name}`;

/** `user:bea` / `group:team` / `bea` (a plain name is a user) → a recipient; undefined for an empty name. */
export function recipientOf(to: string): Recipient | undefined {
  const t = to.trim();
  const m = /^(user|group):(.*)$/.exec(t);
  const name = (m ? (m[2] ?? '') : t).trim();
  if (!name) return undefined;
  return { kind: m?.[1] === 'group' ? 'group' : 'user', name };
}

/**
 * Suggestions for the share dialog's "person or group" field: of the names
 * the user already knows (their own groups, whom they shared with, who
 * shared with them) those that start with what is typed — or, after "group:",
 * groups only — without the ones the item is already shared with; groups first,
 * then by name, at most `max`. Never a list of all accounts: nothing here asks
 * the server who exists.
 */
export function suggestRecipients(typed: string, known: readonly Recipient[], already: ReadonlySet<string>, max = 6): Recipient[] {
  const t = typed.trim().toLowerCase();
  const groupsOnly = t.startsWith('group:');
  const prefix = t.replace(/^(user|group):/, '');
  const seen = new Set<string>();
  const out: Recipient[] = [];
  for (const r of known) {
    const to = recipientTo(r);
    if (seen.has(to) || already.has(to)) continue;
    seen.add(to);
    if (groupsOnly && r.kind !== 'group') continue;
    if (t.startsWith('user:') && r.kind !== 'user') continue;
    if (!r.name.toLowerCase().startsWith(prefix)) continue;
    out.push(r);
  }
  out.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'group' ? -1 : 1));
  return out.slice(0, max);
}
