import { formatBytesHere, locale, t } from './i18n';

/** 1234567 → "1.2 MB" (German "1,2 MB"; powers of 1024, as file managers show). */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  return formatBytesHere(bytes);
}

export const formatSpeed = (bytesPerSecond: number): string => `${formatSize(Math.round(bytesPerSecond))}/s`;

/** One formatter per option set and language, made when first asked for (the language can change). */
function cached<T>(make: (locale: string) => T): () => T {
  const made = new Map<string, T>();
  return () => {
    const l = locale();
    let f = made.get(l);
    if (!f) made.set(l, (f = make(l)));
    return f;
  };
}
const timeFmt = cached((l) => new Intl.DateTimeFormat(l, { hour: 'numeric', minute: '2-digit' }));
const dayFmt = cached((l) => new Intl.DateTimeFormat(l, { month: 'short', day: 'numeric' }));
const fullDayFmt = cached((l) => new Intl.DateTimeFormat(l, { year: 'numeric', month: 'short', day: 'numeric' }));
const exactFmt = cached((l) => new Intl.DateTimeFormat(l, { dateStyle: 'full', timeStyle: 'medium' }));
const dateTimeFmt = cached((l) => new Intl.DateTimeFormat(l, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' }));
const agoFmt = cached((l) => new Intl.RelativeTimeFormat(l, { numeric: 'auto' }));

/** Today → "14:05", this year → "Mar 3", older → "Mar 3, 2021". */
export function formatDate(iso: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  if (d.toDateString() === now.toDateString()) return timeFmt().format(d);
  if (d.getFullYear() === now.getFullYear()) return dayFmt().format(d);
  return fullDayFmt().format(d);
}

export function formatExactDate(iso: string | Date): string {
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  return Number.isNaN(d.getTime()) ? '' : exactFmt().format(d);
}

/** The date with its year and the time to the second ("Mar 3, 2026, 11:15:07 PM"): moments apart still read apart. */
export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '—' : dateTimeFmt().format(d);
}

/** How long ago, in the largest whole unit: "just now", "42 seconds ago", "2 minutes ago", "yesterday", "3 months ago". */
export function formatAgo(iso: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const s = Math.round((d.getTime() - now.getTime()) / 1000);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [['year', 31_536_000], ['month', 2_592_000], ['week', 604_800], ['day', 86_400], ['hour', 3600], ['minute', 60]];
  for (const [unit, size] of units) {
    if (Math.abs(s) >= size) return agoFmt().format(Math.trunc(s / size), unit);
  }
  // A few seconds either way (clocks differ a little) is "now".
  return Math.abs(s) < 5 ? t('time.justNow') : agoFmt().format(s, 'second');
}

/** 3700 s → "1 hour", 86400 → "24 hours", 7 days → "7 days". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return t('time.seconds', { count: s });
  const m = Math.round(s / 60);
  if (m < 90) return t('time.minutes', { count: m });
  const h = Math.round(s / 3600);
  if (h <= 48) return t('time.hours', { count: h });
  return t('time.days', { count: Math.round(s / 86400) });
}

