import { useRef, useState } from 'react';
import { shareLink, type Share } from '../api/shares';
import { copyText } from '../lib/clipboard';
import { onLinkClick, SHARED_PATH } from '../lib/router';
import { withBase } from '../lib/base';
import { Icon } from './icons';
import { QrCode } from './QrCode';
import { shareSummary } from './share-text';

/** A link just made: the address to copy, its QR code, and what it allows. */
export function ShareCreated({ share, onClose }: { share: Share; onClose: () => void }) {
  const url = shareLink(share);
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <div className="stack">
      <div className="share-created">
        <div className="stack share-created-main">
          <p>
            <strong>The link is ready.</strong> Anyone who has it can open it{share.has_password ? ' with the password' : ''}.
          </p>
          <div className="copy-row">
            <input ref={input} className="share-url" readOnly value={url} aria-label="Share link" onFocus={(e) => e.currentTarget.select()} />
            <button type="button" className="button primary" onClick={async () => setCopied((await copyText(url, input.current)) ? 'yes' : 'no')}>
              <Icon name={copied === 'yes' ? 'check' : 'link'} size={18} /> Copy link
            </button>
          </div>
          <p className="share-status" role="status">
            {copied === 'yes' ? <strong>Link copied. </strong> : copied === 'no' ? <strong>Select the link and copy it. </strong> : null}
            <span className="share-validity">{shareSummary(share)}</span>
          </p>
        </div>
        <QrCode text={url} label="QR code of the link" />
      </div>
      <div className="dialog-actions">
        <a className="button ghost" href={withBase(SHARED_PATH)} onClick={(e) => onLinkClick(e, SHARED_PATH)}>
          See all my links
        </a>
        <button type="button" className="button primary" onClick={onClose}>
          Done
        </button>
      </div>
    </div>
  );
}
