import { useState } from 'react';
import { browseUrl } from '../api/paths';
import { shareLink, shareSegments, type Share } from '../api/shares';
import { copyText } from '../lib/clipboard';
import { kindOf } from '../lib/file-kind';
import { formatDate, formatExactDate } from '../lib/format';
import { shareState } from '../lib/share-rules';
import { onLinkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { Icon, KindIcon } from './icons';
import { downloadsText, expiryText, stateLabel } from './share-text';
import { t } from '../lib/i18n';

/** One share link in "Shared by me": what it shares, its state and limits, copy and revoke. */
export function ShareItem({ share, onRevoke, onCopied }: { share: Share; onRevoke: () => void; onCopied: (ok: boolean, url: string) => void }) {
  const [now] = useState(() => new Date());
  const segments = shareSegments(share);
  const name = segments[segments.length - 1] ?? t('nav.myFiles');
  const parent = browseUrl(share.is_file ? segments.slice(0, -1) : segments);
  const state = shareState(share, now.getTime());
  const expiry = expiryText(share, now);
  return (
    <li className={`share-item state-${state}`} data-id={share.id} aria-label={name}>
      <div className="share-head">
        <KindIcon kind={share.is_file ? kindOf(name, true) : 'folder'} />
        <div className="share-name">
          <a href={withBase(parent)} onClick={(e) => onLinkClick(e, parent)} className="entry-link" title={share.is_file ? t('shareItem.openFolderOf', { name }) : t('shareItem.open', { name })}>
            <span className="name-text">{name}</span>
          </a>
          <span className="muted small share-path" title={`/${segments.join('/')}`}>
            /{segments.join('/')}
          </span>
        </div>
        <span className={`badge badge-${state}`}>{stateLabel(state)}</span>
      </div>
      <dl className="share-facts">
        <div>
          <dt>{t('shareItem.kind')}</dt>
          <dd>{share.is_file ? t('shareItem.file') : t('list.folder')}</dd>
        </div>
        <div>
          <dt>{t('shareItem.downloads')}</dt>
          <dd className="share-downloads">{share.upload_only ? '—' : downloadsText(share)}</dd>
        </div>
        <div>
          <dt>{t('shareItem.expiry')}</dt>
          <dd title={expiry.exact}>{expiry.text}</dd>
        </div>
        <div>
          <dt>{t('share.password')}</dt>
          <dd>{share.has_password ? t('common.yes') : t('common.no')}</dd>
        </div>
        <div>
          <dt>{t('shareForm.uploadOnly')}</dt>
          <dd>{share.upload_only ? t('common.yes') : t('common.no')}</dd>
        </div>
        <div>
          <dt>{t('keys.created')}</dt>
          <dd title={formatExactDate(share.created_at)}>{formatDate(share.created_at, now)}</dd>
        </div>
      </dl>
      <div className="share-actions">
        <button type="button" className="button small" onClick={async () => onCopied(await copyText(shareLink(share)), shareLink(share))}>
          <Icon name="link" size={16} /> {t('shareCreated.copy')}
        </button>
        <button type="button" className="button small danger-text" onClick={onRevoke}>
          <Icon name="trash" size={16} /> {t('keys.revokeShort')}
        </button>
      </div>
    </li>
  );
}
