import { IntlMessageFormat, type PrimitiveType } from 'intl-messageformat';
import { CATALOGS, type MessageKey } from './catalogs.js';
import type { Locale } from './negotiate.js';

export type MessageValues = Record<string, PrimitiveType>;
export type Translate = (key: MessageKey, values?: MessageValues) => string;

const cache = new Map<Locale, Translate>();

/**
 * `t(key, values)` for one language: the catalog's ICU message formatted with the language's
 * plural rules and number formats. Each message is parsed once, on first use.
 */
export function translator(locale: Locale): Translate {
  const known = cache.get(locale);
  if (known) return known;
  const parsed = new Map<MessageKey, IntlMessageFormat>();
  const t: Translate = (key, values) => {
    let mf = parsed.get(key);
    if (!mf) {
      mf = new IntlMessageFormat(CATALOGS[locale][key], locale);
      parsed.set(key, mf);
    }
    return String(mf.format(values));
  };
  cache.set(locale, t);
  return t;
}
