import { useRef, useState } from 'react';
import { shareLink, type Share } from '../api/shares';
import { copyText } from '../lib/clipboard';
import { onLinkClick, SHARED_PATH } from '../lib/router';
import { withBase } from '../lib/base';
import { Icon } from './icons';
import { QrCode } from './QrCode';
import { shareSummary } from './share-text';
import { t } from '../lib/i18n';

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
            <strong>{t('shareCreated.ready')}</strong> {share.has_password ? t('shareCreated.anyoneWithPassword') : t('shareCreated.anyone')}
          </p>
          <div className="copy-row">
            <input ref={input} className="share-url" readOnly value={url} aria-label={t('shareCreated.link')} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" className="button primary" onClick={async () => setCopied((await copyText(url, input.current)) ? 'yes' : 'no')}>
              <Icon name={copied === 'yes' ? 'check' : 'link'} size={18} /> {t('shareCreated.copy')}
            </button>
          </div>
          <p className="share-status" role="status">
            {copied === 'yes' ? <strong>{t('shareCreated.copied')} </strong> : copied === 'no' ? <strong>{t('shareCreated.copyByHand')} </strong> : null}
            <span className="share-validity">{shareSummary(share)}</span>
          </p>
        </div>
        <QrCode text={url} label={t('shareCreated.qr')} />
      </div>
      <div className="dialog-actions">
        <a className="button ghost" href={withBase(SHARED_PATH)} onClick={(e) => onLinkClick(e, SHARED_PATH)}>
          {t('shareCreated.allLinks')}
        </a>
        <button type="button" className="button primary" onClick={onClose}>
          {t('common.done')}
        </button>
      </div>
    </div>
  );
}
