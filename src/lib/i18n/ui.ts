import type { ErrorCode } from '../../domain/errors.js';
import { DEFAULT_LOCALE, type Locale } from './negotiate.js';
import { translator, type Translate } from './translate.js';
import { localizeSentence } from './sentences.js';

/** What a page needs to speak one language: its tag (for `<html lang>` and Intl) and its messages. */
export type Ui = { readonly locale: Locale; readonly t: Translate };

export const uiFor = (locale: Locale): Ui => ({ locale, t: translator(locale) });

/**
 * The sentence to show a reader for an error: the server's own (English, and the most precise) in
 * English; in another language the same sentence worded in it when the server wrote it from the
 * catalog (src/lib/i18n/sentences.ts), else the catalog's sentence for its code (`apiError.<code>`),
 * which every error code has (test/browser/web-error-codes.test.ts).
 */
export const errorSentence = (ui: Ui, e: { readonly code: ErrorCode; readonly message: string }): string =>
  ui.locale === DEFAULT_LOCALE ? e.message : (localizeSentence(e.message, ui.t) ?? ui.t(`apiError.${e.code}`));
