import type { ErrorCode } from '../../domain/errors.js';
import { DEFAULT_LOCALE, type Locale } from './negotiate.js';
import { translator, type Translate } from './translate.js';

/** What a page needs to speak one language: its tag (for `<html lang>` and Intl) and its messages. */
export type Ui = { readonly locale: Locale; readonly t: Translate };

export const uiFor = (locale: Locale): Ui => ({ locale, t: translator(locale) });

/**
 * The sentence to show a reader for an error: the server's own (English, and the most precise) in
 * English; in another language the catalog's sentence for its code (`apiError.<code>`), which every
 * error code has (test/browser/web-error-codes.test.ts).
 */
export const errorSentence = (ui: Ui, e: { readonly code: ErrorCode; readonly message: string }): string => (ui.locale === DEFAULT_LOCALE ? e.message : ui.t(`apiError.${e.code}`));
