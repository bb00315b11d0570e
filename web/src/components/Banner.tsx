import { useEffect, useState } from 'react';
import type { ApiClient } from '../api/client';
import { withBase } from '../lib/base';
import { t } from '../lib/i18n';

/** How often a shown page re-reads its banner, so an operator's edit reaches open tabs. */
const REFRESH_MS = 5 * 60_000;

/**
 * The operator's banner text (data/banner/login.txt or page.txt), or null
 * when none is set. Fetched when shown and every few minutes after; a
 * failure just shows no banner (it is a notice, never in the way).
 */
export function useBanner(kind: 'login' | 'page', client?: ApiClient, refreshKey?: unknown): string | null {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    const load = async () => {
      try {
        const url = withBase(`/banner/${kind}`);
        const res = kind === 'login' || !client ? await fetch(url, { cache: 'no-store' }) : await client.request(url).catch(() => null);
        const body = res && res.ok ? await res.text() : '';
        if (!cancelled) setText(body.trim() ? body : null);
      } catch {
        if (!cancelled) setText(null);
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [kind, client, refreshKey]);
  return text;
}

/** A banner as plain text (React escapes it: never HTML), line breaks kept. */
export function Banner({ text, kind }: { text: string | null; kind: 'login' | 'page' }) {
  if (!text) return null;
  return (
    <div className={`banner banner-${kind}`} role="note" aria-label={t('banner.notice')} data-banner={kind}>
      {text}
    </div>
  );
}
