/**
 * Which of our languages a reader gets: the first of their languages, in their order of
 * preference, whose primary subtag we have ("de-AT" reads German); English when none is.
 * Pure, so the web UI (navigator.languages) and the server-rendered pages (Accept-Language)
 * answer alike.
 */

export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const isLocale = (tag: unknown): tag is Locale => typeof tag === 'string' && (LOCALES as readonly string[]).includes(tag);

export function pickLocale(wanted: readonly string[]): Locale {
  for (const tag of wanted) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (isLocale(primary)) return primary;
  }
  return DEFAULT_LOCALE;
}

/** An Accept-Language header's tags, best first (RFC 9110 §12.5.4); a tag with q=0 is refused, not wanted. */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (!header) return [];
  const tags: { tag: string; q: number; at: number }[] = [];
  header.split(',').forEach((part, at) => {
    const [tag, ...params] = part.trim().split(';');
    if (!tag || tag === '*') return;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (Number.isFinite(q) && q > 0) tags.push({ tag: tag.trim(), q, at });
  });
  // A stable order: equal weights keep the order the reader wrote.
  return tags.sort((a, b) => b.q - a.q || a.at - b.at).map((t) => t.tag);
}
