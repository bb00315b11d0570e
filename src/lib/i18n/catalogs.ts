import en from './en.json' with { type: 'json' };
import de from './de.json' with { type: 'json' };
import type { Locale } from './negotiate.js';

/**
 * The message catalogs, one JSON file a language, in ICU MessageFormat. en.json is the
 * reference: every other catalog has exactly its keys (a test holds them in step), so a
 * key missing from a translation is a failing test, not an English word on a German page.
 */
export type MessageKey = keyof typeof en;
export type Catalog = Readonly<Record<MessageKey, string>>;

export const CATALOGS: Readonly<Record<Locale, Catalog>> = { en, de };

/** Each language's name in itself, for the language setting. */
export const LANGUAGE_NAMES: Readonly<Record<Locale, string>> = { en: 'English', de: 'Deutsch' };
