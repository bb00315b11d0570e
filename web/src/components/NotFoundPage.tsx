import { withBase } from '../lib/base';
import { onLinkClick, useTitle } from '../lib/router';
import { Icon } from './icons';

/** A page path the app does not have (the server answered it with 404 too): say so, and offer the way back. */
export function NotFoundPage({ signedIn }: { signedIn: boolean }) {
  useTitle('Page not found');
  const home = signedIn ? '/browse/' : '/login';
  return (
    <main className="not-found-page">
      <div className="empty-state" role="alert">
        <span className="kind-icon kind-error">
          <Icon name="alert" size={56} />
        </span>
        <h1>Page not found</h1>
        <p className="muted">There is no page at this address. It may have been mistyped, or the link is out of date.</p>
        <div className="empty-actions">
          <a className="button primary" href={withBase(home)} onClick={(e) => onLinkClick(e, home)}>
            <Icon name="home" size={18} /> {signedIn ? 'Go to My files' : 'Go to sign-in'}
          </a>
        </div>
      </div>
    </main>
  );
}
