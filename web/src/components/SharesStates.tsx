import type { ApiError } from '../api/errors';
import { onLinkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/** No share links yet: how to make one. */
export function SharesEmpty() {
  return (
    <div className="empty-state">
      <span className="kind-icon kind-folder">
        <Icon name="link" size={56} />
      </span>
      <h2>{t('sharedByMe.none')}</h2>
      <p className="muted">{t('sharedByMe.noneHint')}</p>
      <div className="empty-actions">
        <a className="button primary" href={withBase('/browse/')} onClick={(e) => onLinkClick(e, '/browse/')}>
          <Icon name="home" size={18} /> {t('states.goHome')}
        </a>
      </div>
    </div>
  );
}

export function SharesError({ error, onRetry }: { error: ApiError; onRetry: () => void }) {
  return (
    <div className="empty-state" role="alert">
      <span className="kind-icon kind-error">
        <Icon name="alert" size={56} />
      </span>
      <h2>{t('sharedByMe.failed')}</h2>
      <p className="muted">{error.message}</p>
      <div className="empty-actions">
        <button type="button" className="button primary" onClick={onRetry}>
          <Icon name="retry" size={18} /> {t('states.tryAgain')}
        </button>
      </div>
    </div>
  );
}
