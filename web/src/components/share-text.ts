import type { Share } from '../api/shares';
import type { ShareState } from '../lib/share-rules';
import { formatDate, formatExactDate, plural } from '../lib/format';

export const STATE_LABEL: Record<ShareState, string> = { active: 'Active', expired: 'Expired', used_up: 'Used up' };

/** "Expires Mar 3" / "Expired Mar 3" / "Never expires", with the exact time for a title attribute. */
export function expiryText(share: Pick<Share, 'expires_at'>, now = new Date()): { text: string; exact: string } {
  if (share.expires_at === null) return { text: 'Never expires', exact: '' };
  const past = Date.parse(share.expires_at) <= now.getTime();
  return { text: `${past ? 'Expired' : 'Expires'} ${formatDate(share.expires_at, now)}`, exact: formatExactDate(share.expires_at) };
}

/** "3 / 5" with a limit, "3" without. */
export const downloadsText = (share: Pick<Share, 'downloads' | 'max_downloads'>): string =>
  share.max_downloads === null ? share.downloads.toLocaleString() : `${share.downloads.toLocaleString()} / ${share.max_downloads.toLocaleString()}`;

/** One line about a new link: its expiry and what guards it. */
export function shareSummary(share: Share): string {
  const parts = [share.expires_at === null ? 'Never expires' : `Works until ${formatExactDate(share.expires_at)}`];
  if (share.has_password) parts.push('password protected');
  if (share.max_downloads !== null) parts.push(`at most ${plural(share.max_downloads, 'download')}`);
  if (share.upload_only) parts.push('upload only');
  return `${parts.join(' · ')}.`;
}
