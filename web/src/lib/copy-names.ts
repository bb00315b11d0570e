/**
 * The name a copy takes in a folder: its own when free, else the first free
 * `name (1).ext`, `name (2).ext`… (the server's collision suffix; a folder's
 * name keeps its dots, the suffix goes at its end), so a copy never replaces
 * anything, also when it lands in its own folder.
 */
export function copyName(name: string, isFile: boolean, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  const dot = isFile ? name.lastIndexOf('.') : -1;
  const [stem, ext] = dot > 0 && dot < name.length - 1 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 1; ; n++) {
    const next = `${stem} (${n})${ext}`;
    if (!taken.has(next)) return next;
  }
}
