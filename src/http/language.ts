import { isLocale, parseAcceptLanguage, pickLocale, type Locale } from '../lib/i18n/negotiate.js';
import { parseCookies } from './cookies.js';

/**
 * The cookie in which the web UI's language setting is also kept, so that the server-rendered
 * pages (/basic/, share links) follow the reader's choice; it holds only a language tag.
 */
export const LANGUAGE_COOKIE = 'fc_lang';

/** A server-rendered page's language: the reader's setting, else their browser's Accept-Language, else English. */
export function requestLocale(headers: { readonly cookie?: string | undefined; readonly 'accept-language'?: string | undefined }): Locale {
  const chosen = parseCookies(headers.cookie).get(LANGUAGE_COOKIE);
  if (isLocale(chosen)) return chosen;
  return pickLocale(parseAcceptLanguage(headers['accept-language']));
}
