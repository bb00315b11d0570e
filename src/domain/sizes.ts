/**
 * A size as people write it on the command line: `10G`, `500M`, `1.5T`,
 * `2048` (bytes), `64KiB`, `1 GB`. Units are binary (K = 1024), as `du`,
 * `ls -h` and every file manager count; a trailing `B`/`iB` is accepted.
 * Returns bytes, or undefined for anything else (negative, not finite, too
 * big to count exactly, a fraction of a byte left over).
 */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const [, number, unit = '', suffix] = m;
  if (suffix !== undefined && suffix.toLowerCase() === 'ib' && unit === '') return undefined;
  const power = unit === '' ? 0 : 'kmgtpe'.indexOf(unit.toLowerCase()) + 1;
  const bytes = Number(number) * 1024 ** power;
  if (!Number.isSafeInteger(Math.round(bytes))) return undefined;
  // 1.5K is 1536 bytes; 1.0001K is no whole number of bytes.
  if (Math.abs(bytes - Math.round(bytes)) > 1e-6) return undefined;
  return Math.round(bytes);
}

/** A quota as given to `user quota NAME SIZE|none`: bytes, null for `none`, undefined when it is neither. */
export function parseQuota(text: string): number | null | undefined {
  return text.trim().toLowerCase() === 'none' ? null : parseSize(text);
}

/** Bytes as a short readable figure (1024-based): `0 B`, `512 B`, `1.5 KiB`, `10 GiB`. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let i = 0;
  while (Math.abs(value) >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  const shown = i === 0 ? String(value) : value >= 100 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${units[i]}`;
}
