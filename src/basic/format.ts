import { formatBytes } from '../lib/i18n/format.js';
import type { Locale } from '../lib/i18n/negotiate.js';

/** Display rules of the basic UI's listings, pure. */

/** `532 B`, `1.5 KiB`, `12 MiB` (German `1,5 KiB`): two significant digits below 10, whole numbers above. */
export const formatSize = (bytes: number, locale: Locale = 'en'): string => formatBytes(bytes, locale);

/** `Nov 24, 2026, 22:46 UTC` (German `24.11.2026, 22:46 UTC`): in UTC, so the same on every server, to the minute. */
export function formatModified(d: Date, locale: Locale = 'en'): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC', hourCycle: 'h23' }).format(d)} UTC`;
}

/** The 1-based page number in `?page=`, or 1 for anything else; clamped to the last page. */
export function pageNumber(raw: unknown, total: number, pageSize: number): number {
  const last = Math.max(1, Math.ceil(total / pageSize));
  const n = typeof raw === 'string' && /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : 1;
  return Math.min(n, last);
}
