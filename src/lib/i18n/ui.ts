import type { Locale } from './negotiate.js';
import { translator, type Translate } from './translate.js';

/** What a page needs to speak one language: its tag (for `<html lang>` and Intl) and its messages. */
export type Ui = { readonly locale: Locale; readonly t: Translate };

export const uiFor = (locale: Locale): Ui => ({ locale, t: translator(locale) });
