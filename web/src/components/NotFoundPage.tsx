import { withBase } from '../lib/base';
import { onLinkClick, useTitle } from '../lib/router';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/** A page path the app does not have (the server answered it with 404 too): say so, and offer the way back. */
export function NotFoundPage({ signedIn }: { signedIn: boolean }) {
  useTitle(t('notFound.title'));
  const home = signedIn ? '/browse/' : '/login';
  return (
    <main className="not-found-page">
      <div className="empty-state" role="alert">
        <span className="kind-icon kind-error">
          <Icon name="alert" size={56} />
        </span>
        <h1>{t('notFound.title')}</h1>
        <p className="muted">{t('notFound.text')}</p>
        <div className="empty-actions">
          <a className="button primary" href={withBase(home)} onClick={(e) => onLinkClick(e, home)}>
            <Icon name="home" size={18} /> {signedIn ? t('states.goHome') : t('notFound.signIn')}
          </a>
        </div>
      </div>
    </main>
  );
}
