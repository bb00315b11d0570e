/** Display rules of the basic UI's listings, pure. */

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `532 B`, `1.5 KiB`, `12 MiB`: two significant digits below 10, whole numbers above. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let v = bytes;
  let unit = 'B';
  for (const u of UNITS) {
    if (v < 1024) break;
    v /= 1024;
    unit = u;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${unit}`;
}

/** `2026-11-24 22:46 UTC`: the same on every server and readable in a text browser. */
export function formatModified(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The 1-based page number in `?page=`, or 1 for anything else; clamped to the last page. */
export function pageNumber(raw: unknown, total: number, pageSize: number): number {
  const last = Math.max(1, Math.ceil(total / pageSize));
  const n = typeof raw === 'string' && /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : 1;
  return Math.min(n, last);
}
