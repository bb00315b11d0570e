import type { ApiError } from '../api/errors';
import { withBase } from '../lib/base';
import { onLinkClick } from '../lib/router';
import { Icon } from './icons';

/** An admin page's list that did not load: refused to a non-admin (403, with the way home), or failed (with Try again). */
export function AdminOnlyState({ error, what, forbiddenTitle, forbiddenText, onRetry }: { error: ApiError; what: string; forbiddenTitle: string; forbiddenText: string; onRetry: () => void }) {
  const forbidden = error.status === 403;
  return (
    <div className="empty-state" role="alert">
      <span className="kind-icon kind-error">
        <Icon name={forbidden ? 'lock' : 'alert'} size={56} />
      </span>
      <h2>{forbidden ? forbiddenTitle : `The ${what} could not be loaded`}</h2>
      <p className="muted">{forbidden ? forbiddenText : error.message}</p>
      <div className="empty-actions">
        {forbidden ? (
          <a className="button primary" href={withBase('/browse/')} onClick={(e) => onLinkClick(e, '/browse/')}>
            <Icon name="home" size={18} /> Go to My files
          </a>
        ) : (
          <button type="button" className="button primary" onClick={onRetry}>
            <Icon name="retry" size={18} /> Try again
          </button>
        )}
      </div>
    </div>
  );
}
