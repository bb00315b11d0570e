import { LANGUAGE_NAMES, type MessageKey } from '../../../src/lib/i18n/catalogs';
import { formatBytes } from '../../../src/lib/i18n/format';
import { isLocale, LOCALES, pickLocale, type Locale } from '../../../src/lib/i18n/negotiate';
import { translator, type MessageValues } from '../../../src/lib/i18n/translate';

/**
 * The UI's language: the one chosen in Settings (kept in this browser's localStorage, and in
 * the fc_lang cookie so that /basic/ and share pages follow it), else the first of the
 * browser's languages we have, else English. The catalogs are the server's
 * (src/lib/i18n/*.json), bundled: nothing is fetched at run time.
 */

export { LANGUAGE_NAMES, LOCALES, type Locale, type MessageKey };

const STORAGE_KEY = 'file-cloud-language';
const COOKIE = 'fc_lang';

function stored(): Locale | undefined {
  try {
    const v = globalThis.localStorage?.getItem(STORAGE_KEY);
    return isLocale(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The browser's languages, best first (navigator.languages; Node's navigator in rule tests). */
const browserLanguages = (): readonly string[] => globalThis.navigator?.languages ?? [];

export const browserLocale = (): Locale => pickLocale(browserLanguages());

let current: Locale = stored() ?? browserLocale();
const listeners = new Set<() => void>();

export const locale = (): Locale => current;

/** The language set in Settings, or 'auto' (the browser's). */
export const languageSetting = (): Locale | 'auto' => stored() ?? 'auto';

export function t(key: MessageKey, values?: MessageValues): string {
  return translator(current)(key, values);
}

/** Applies the language to the document (`<html lang>`), for screen readers, spelling and hyphenation. */
export function applyDocumentLanguage(): void {
  if (typeof document !== 'undefined') document.documentElement.lang = current;
}

/** `cookiePath`: the app's base path with a slash, where /basic/ and /s/ live too. */
export function setLanguage(choice: Locale | 'auto', cookiePath: string): void {
  try {
    if (choice === 'auto') localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, choice);
  } catch {
    // A browser that keeps nothing still switches for this page.
  }
  document.cookie = choice === 'auto' ? `${COOKIE}=; Path=${cookiePath}; Max-Age=0; SameSite=Lax` : `${COOKIE}=${choice}; Path=${cookiePath}; Max-Age=31536000; SameSite=Lax`;
  current = choice === 'auto' ? browserLocale() : choice;
  applyDocumentLanguage();
  for (const l of listeners) l();
}

export function onLanguageChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Sizes as the file manager shows them (KB, MB: powers of 1024), in the UI's language. */
export const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
export const formatBytesHere = (bytes: number): string => formatBytes(bytes, current, SIZE_UNITS, true);
