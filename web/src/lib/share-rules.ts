import { t } from './i18n';

/**
 * The rules of share links on the client: the share dialog's expiry choices
 * and how each becomes the API's `expires_in` (seconds from now, or null for
 * never), the download limit field, and a link's state in "Shared by me".
 * No DOM here: test/browser/web-share-rules.test.ts runs these in Node.
 */
export type ExpiryChoice = '1d' | '7d' | '30d' | 'never' | 'date';

const DAY = 86_400;

/** The expiry choices with their labels, in the UI's language of the moment. */
export const expiryPresets = (): { value: ExpiryChoice; label: string }[] => [
  { value: '1d', label: t('time.days', { count: 1 }) },
  { value: '7d', label: t('time.days', { count: 7 }) },
  { value: '30d', label: t('time.days', { count: 30 }) },
  { value: 'never', label: t('rules.expiryNever') },
  { value: 'date', label: t('shareForm.onDate') },
];

export const DEFAULT_EXPIRY: ExpiryChoice = '7d';

/** `YYYY-MM-DD` of a local day, as `<input type="date">` takes it. */
export function dayString(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Tomorrow's local day, the earliest date the picker offers. */
export function tomorrow(now: Date): string {
  return dayString(new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1));
}

/**
 * Seconds until the choice ends: a preset counts from now; a date means the
 * end of that local day. Undefined when the date is missing or not in the
 * future (the form says so instead of asking the server).
 */
export function expiresIn(choice: ExpiryChoice, date: string, now: Date): number | null | undefined {
  switch (choice) {
    case '1d':
      return DAY;
    case '7d':
      return 7 * DAY;
    case '30d':
      return 30 * DAY;
    case 'never':
      return null;
    case 'date': {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
      if (!m) return undefined;
      const end = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1).getTime();
      const seconds = Math.floor((end - now.getTime()) / 1000);
      return seconds > 0 ? seconds : undefined;
    }
  }
}

/** A download limit from the form: '' = none; otherwise a whole number from 1, or undefined when invalid. */
export function parseLimit(text: string): number | null | undefined {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n >= 1 && Number.isSafeInteger(n) ? n : undefined;
}

export type ShareState = 'active' | 'expired' | 'used_up';

/** Whether a link still works; a revoked one is no longer listed at all. */
export function shareState(share: { expires_at: string | null; max_downloads: number | null; downloads: number }, now: number): ShareState {
  if (share.expires_at !== null && Date.parse(share.expires_at) <= now) return 'expired';
  if (share.max_downloads !== null && share.downloads >= share.max_downloads) return 'used_up';
  return 'active';
}
