import { useState } from 'react';
import type { AccountApi, Me } from '../api/account';
import type { ApiError } from '../api/errors';
import { Icon } from './icons';
import { ListError, ListSkeleton } from './SectionStates';
import { TotpOffDialog, TotpSetupDialog } from './TotpDialogs';
import { useNotify } from './Toasts';

/** Two-step verification (TOTP): on or off, set up with a QR code, turned off with a code. */
export function TotpSection({ api, me, error, onChange }: { api: AccountApi; me: Me | null; error: ApiError | null; onChange: () => void }) {
  const [dialog, setDialog] = useState<'setup' | 'off' | null>(null);
  const notify = useNotify();
  return (
    <section className="settings-section" aria-labelledby="totp-title">
      <header className="section-head">
        <Icon name="shield" />
        <div>
          <h2 id="totp-title">Two-step verification</h2>
          <p className="muted small">Signing in then needs a code from an app on your phone as well as your password. App passwords are not affected.</p>
        </div>
      </header>
      {me ? (
        <div className="totp-state">
          {me.totp ? (
            <>
              <span className="badge badge-active">On</span>
              <span className="totp-state-text">Sign-in asks for a code from your authenticator app.</span>
              <button type="button" className="button small danger-text" onClick={() => setDialog('off')}>
                Turn off…
              </button>
            </>
          ) : (
            <>
              <span className="badge">Off</span>
              <span className="totp-state-text">Only your password protects your account.</span>
              <button type="button" className="button primary small" onClick={() => setDialog('setup')}>
                <Icon name="shield" size={16} /> Set up
              </button>
            </>
          )}
        </div>
      ) : error ? (
        <ListError what="Your account" error={error} onRetry={onChange} />
      ) : (
        <ListSkeleton label="Loading" rows={1} />
      )}
      {dialog === 'setup' && me ? (
        <TotpSetupDialog
          api={api}
          user={me.username}
          onEnabled={() => {
            onChange();
            notify('Two-step verification is on.');
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === 'off' ? (
        <TotpOffDialog
          api={api}
          onDisabled={() => {
            onChange();
            notify('Two-step verification is off.');
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </section>
  );
}
