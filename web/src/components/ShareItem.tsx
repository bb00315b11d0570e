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
import { downloadsText, expiryText, STATE_LABEL } from './share-text';

/** One share link in "Shared by me": what it shares, its state and limits, copy and revoke. */
export function ShareItem({ share, onRevoke, onCopied }: { share: Share; onRevoke: () => void; onCopied: (ok: boolean, url: string) => void }) {
  const [now] = useState(() => new Date());
  const segments = shareSegments(share);
  const name = segments[segments.length - 1] ?? 'My files';
  const parent = browseUrl(share.is_file ? segments.slice(0, -1) : segments);
  const state = shareState(share, now.getTime());
  const expiry = expiryText(share, now);
  return (
    <li className={`share-item state-${state}`} data-id={share.id} aria-label={name}>
      <div className="share-head">
        <KindIcon kind={share.is_file ? kindOf(name, true) : 'folder'} />
        <div className="share-name">
          <a href={withBase(parent)} onClick={(e) => onLinkClick(e, parent)} className="entry-link" title={`Open ${share.is_file ? 'the folder of ' : ''}${name}`}>
            <span className="name-text">{name}</span>
          </a>
          <span className="muted small share-path" title={`/${segments.join('/')}`}>
            /{segments.join('/')}
          </span>
        </div>
        <span className={`badge badge-${state}`}>{STATE_LABEL[state]}</span>
      </div>
      <dl className="share-facts">
        <div>
          <dt>Kind</dt>
          <dd>{share.is_file ? 'File' : 'Folder'}</dd>
        </div>
        <div>
          <dt>Downloads</dt>
          <dd className="share-downloads">{share.upload_only ? '—' : downloadsText(share)}</dd>
        </div>
        <div>
          <dt>Expiry</dt>
          <dd title={expiry.exact}>{expiry.text}</dd>
        </div>
        <div>
          <dt>Password</dt>
          <dd>{share.has_password ? 'Yes' : 'No'}</dd>
        </div>
        <div>
          <dt>Upload only</dt>
          <dd>{share.upload_only ? 'Yes' : 'No'}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd title={formatExactDate(share.created_at)}>{formatDate(share.created_at, now)}</dd>
        </div>
      </dl>
      <div className="share-actions">
        <button type="button" className="button small" onClick={async () => onCopied(await copyText(shareLink(share)), shareLink(share))}>
          <Icon name="link" size={16} /> Copy link
        </button>
        <button type="button" className="button small danger-text" onClick={onRevoke}>
          <Icon name="trash" size={16} /> Revoke
        </button>
      </div>
    </li>
  );
}
