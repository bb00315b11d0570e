import type { Locale } from './negotiate.js';

/**
 * Numbers, sizes and dates in a language's own way, through Intl ("1,5 MiB", "2. Dez. 2026").
 * Sizes count in powers of 1024; `units` names them (the file manager says KB, the basic
 * pages KiB).
 */

export const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** One decimal below 10 (below 100 with `fine`), whole numbers above; bytes always whole. */
export function formatBytes(bytes: number, locale: Locale, units: readonly string[] = BINARY_UNITS, fine = false): string {
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 || v >= (fine ? 100 : 10) ? 0 : 1;
  const n = new Intl.NumberFormat(locale, { minimumFractionDigits: fine ? 0 : digits, maximumFractionDigits: digits, useGrouping: 'min2' }).format(i === 0 ? v : digits ? Math.round(v * 10) / 10 : Math.round(v));
  return `${n} ${units[i]}`;
}

export const formatNumber = (n: number, locale: Locale): string => new Intl.NumberFormat(locale).format(n);
