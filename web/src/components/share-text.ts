import type { Share } from '../api/shares';
import type { ShareState } from '../lib/share-rules';
import { formatDate, formatExactDate } from '../lib/format';
import { locale, t } from '../lib/i18n';

export const stateLabel = (state: ShareState): string => t(`shareState.${state}`);

/** "Expires Mar 3" / "Expired Mar 3" / "Never expires", with the exact time for a title attribute. */
export function expiryText(share: Pick<Share, 'expires_at'>, now = new Date()): { text: string; exact: string } {
  if (share.expires_at === null) return { text: t('shareText.neverExpires'), exact: '' };
  const past = Date.parse(share.expires_at) <= now.getTime();
  const date = formatDate(share.expires_at, now);
  return { text: past ? t('shareText.expiredOn', { date }) : t('shareText.expiresOn', { date }), exact: formatExactDate(share.expires_at) };
}

/** "3 / 5" with a limit, "3" without. */
export const downloadsText = (share: Pick<Share, 'downloads' | 'max_downloads'>): string =>
  share.max_downloads === null ? share.downloads.toLocaleString(locale()) : `${share.downloads.toLocaleString(locale())} / ${share.max_downloads.toLocaleString(locale())}`;

/** One line about a new link: its expiry and what guards it. */
export function shareSummary(share: Share): string {
  const parts = [share.expires_at === null ? t('shareText.neverExpires') : t('shareText.worksUntil', { date: formatExactDate(share.expires_at) })];
  if (share.has_password) parts.push(t('shareText.passwordProtected'));
  if (share.max_downloads !== null) parts.push(t('shareText.atMost', { count: share.max_downloads }));
  if (share.upload_only) parts.push(t('shareText.uploadOnly'));
  return `${parts.join(' · ')}.`;
}
