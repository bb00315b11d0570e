import { t } from './i18n';

/**
 * The rules of the account pages on the client: quota sizes as people type
 * them ("10G", "500 MB", "none"), the new-password check, app-password expiry
 * choices, a readable name for a session's client (its User-Agent), and how a
 * TOTP secret is shown, in the UI's language. No DOM here: test/browser/web-account-rules.test.ts
 * runs these in Node.
 */

const UNIT_POWER: Record<string, number> = { '': 0, b: 0, k: 1, kb: 1, kib: 1, m: 2, mb: 2, mib: 2, g: 3, gb: 3, gib: 3, t: 4, tb: 4, tib: 4, p: 5, pb: 5, pib: 5 };

/**
 * A quota as typed: "10G", "1.5 TB", "500m", "1048576" (bytes) → bytes, in
 * powers of 1024 like every size the UI shows (the CLI's `user quota` reads
 * SIZE the same way), with a decimal point or comma ("1,5T" in German);
 * "", or a word for none in English or the UI's language ("none",
 * "unlimited", German "unbegrenzt") → null (no quota); anything else →
 * undefined (not a size).
 */
export function parseQuota(text: string): number | null | undefined {
  const typed = text.trim().toLowerCase();
  const none = new Set(['none', 'unlimited', 'no quota', ...t('userDialog.noQuotaWords').split(',').map((w) => w.trim().toLowerCase())]);
  if (typed === '' || none.has(typed)) return null;
  const m = /^(\d+(?:[.,]\d+)?)\s*([a-z]*)$/.exec(typed);
  if (!m) return undefined;
  const power = UNIT_POWER[m[2] ?? ''];
  if (power === undefined) return undefined;
  const bytes = Math.round(Number((m[1] ?? '').replace(',', '.')) * 1024 ** power);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** Bytes → the shortest exact text parseQuota reads back ("10G", "1536M"), for prefilling the quota field. */
export function quotaText(bytes: number | null): string {
  if (bytes === null) return '';
  const units = ['', 'K', 'M', 'G', 'T', 'P'];
  for (let p = units.length - 1; p > 0; p--) {
    const v = bytes / 1024 ** p;
    if (Number.isInteger(v)) return `${v}${units[p]}`;
  }
  return String(bytes);
}

/** The shortest password the UI accepts for a new one (the server may ask for more, and says so). */
export const MIN_PASSWORD = 8;

/** Why a new password (typed twice) cannot be used, or null when it can. */
export function newPasswordProblem(password: string, confirm: string, current?: string): string | null {
  if (!password) return t('rules.passwordMissing');
  if (password.length < MIN_PASSWORD) return t('rules.passwordShort', { min: MIN_PASSWORD });
  if (current !== undefined && password === current) return t('rules.passwordSame');
  if (password !== confirm) return t('rules.passwordMismatch');
  return null;
}

export type KeyExpiry = 'never' | '30d' | '90d' | '365d';

/** The expiry choices with their labels, in the UI's language of the moment. */
export const keyExpiryChoices = (): { value: KeyExpiry; label: string }[] => [
  { value: 'never', label: t('rules.expiryNever') },
  { value: '30d', label: t('time.days', { count: 30 }) },
  { value: '90d', label: t('time.days', { count: 90 }) },
  { value: '365d', label: t('rules.expiryYear') },
];

/** The `expires_in` (seconds) of an app-password expiry choice; undefined = never (the field is left out). */
export function keyExpiresIn(choice: KeyExpiry): number | undefined {
  const days = { never: 0, '30d': 30, '90d': 90, '365d': 365 }[choice];
  return days ? days * 86_400 : undefined;
}

/**
 * A short readable name for a session's client from its User-Agent:
 * "Firefox on Windows", "Chrome on Android", "curl", or the raw text cut
 * short when nothing is recognised; null for no client at all.
 */
export function clientName(userAgent: string | null | undefined): string | null {
  const ua = (userAgent ?? '').trim();
  if (!ua) return null;
  const tool = /^(curl|Wget|rclone|python-requests|Python-urllib|okhttp|Go-http-client|node-fetch|undici|axios|davfs2|gvfs|Microsoft-WebDAV-MiniRedir|WebDAVFS|Cyberduck|WinSCP)\b/i.exec(ua);
  if (tool) return tool[1] ?? ua;
  const browser = /Edg(?:e|A|iOS)?\//.test(ua)
    ? 'Edge'
    : /OPR\/|Opera/.test(ua)
      ? 'Opera'
      : /Firefox\/|FxiOS\//.test(ua)
        ? 'Firefox'
        : /Chromium\//.test(ua)
          ? 'Chromium'
          : /HeadlessChrome\//.test(ua)
            ? 'Headless Chrome'
            : /Chrome\/|CriOS\//.test(ua)
              ? 'Chrome'
              : /Safari\//.test(ua) && /Version\//.test(ua)
                ? 'Safari'
                : null;
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad|iPod/.test(ua)
      ? 'iOS'
      : /Windows/.test(ua)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua)
          ? 'macOS'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Linux|X11/.test(ua)
              ? 'Linux'
              : null;
  if (browser) return os ? t('rules.browserOn', { browser, os }) : browser;
  return ua.length > 40 ? `${ua.slice(0, 39)}…` : ua;
}

/** A base32 TOTP secret in groups of four, easier to type from the screen ("JBSW Y3DP EHPK 3PXP"). */
export function groupSecret(secret: string): string {
  return (secret.replace(/\s+/g, '').match(/.{1,4}/g) ?? []).join(' ');
}

/** What a person typed as a TOTP or recovery code, as the server wants it: spaces and dashes kept out of six-digit codes. */
export function cleanCode(text: string): string {
  const t = text.trim();
  const digits = t.replace(/[\s-]/g, '');
  return /^\d{6,8}$/.test(digits) ? digits : t;
}

const PASSWORD_ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A random password to hand to a new user (16 characters without look-alikes like l/1/O/0: about 93 bits). */
export function generatePassword(length = 16): string {
  const out: string[] = [];
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % PASSWORD_ALPHABET.length);
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < limit && out.length < length) out.push(PASSWORD_ALPHABET[b % PASSWORD_ALPHABET.length] ?? '');
    }
  }
  return out.join('');
}

/** Why a username cannot be used, or null (the server has the last word; this catches the obvious before asking). */
export function usernameProblem(name: string): string | null {
  if (!name) return t('rules.usernameMissing');
  if (name !== name.trim()) return t('rules.usernameSpace');
  if (name === '.' || name === '..' || /[/\\]/.test(name)) return t('rules.usernameBad');
  return null;
}
