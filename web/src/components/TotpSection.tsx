import { useState } from 'react';
import type { AccountApi, Me } from '../api/account';
import type { ApiError } from '../api/errors';
import { Icon } from './icons';
import { ListError, ListSkeleton } from './SectionStates';
import { TotpOffDialog, TotpSetupDialog } from './TotpDialogs';
import { useNotify } from './Toasts';
import { t } from '../lib/i18n';
import { SectionHead } from './SectionHead';

/** Two-step verification (TOTP): on or off, set up with a QR code, turned off with a code. */
export function TotpSection({ api, me, error, onChange }: { api: AccountApi; me: Me | null; error: ApiError | null; onChange: () => void }) {
  const [dialog, setDialog] = useState<'setup' | 'off' | null>(null);
  const notify = useNotify();
  return (
    <section className="settings-section" aria-labelledby="totp-title">
      <SectionHead id="totp-title" icon="shield" title={t('login.twoStep')} help={t('totp.help')} />
      {me ? (
        <div className="totp-state">
          {me.totp ? (
            <>
              <span className="badge badge-active">{t('totp.on')}</span>
              <span className="totp-state-text">{t('totp.onText')}</span>
              <button type="button" className="button small danger-text" onClick={() => setDialog('off')}>
                {t('totp.turnOff')}
              </button>
            </>
          ) : (
            <>
              <span className="badge">{t('totp.off')}</span>
              <span className="totp-state-text">{t('totp.offText')}</span>
              <button type="button" className="button primary small" onClick={() => setDialog('setup')}>
                <Icon name="shield" size={16} /> {t('totp.setUp')}
              </button>
            </>
          )}
        </div>
      ) : error ? (
        <ListError title={t('totp.failed')} error={error} onRetry={onChange} />
      ) : (
        <ListSkeleton label={t('move.loading')} rows={1} />
      )}
      {dialog === 'setup' && me ? (
        <TotpSetupDialog
          api={api}
          user={me.username}
          onEnabled={() => {
            onChange();
            notify(t('totp.turnedOn'));
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === 'off' ? (
        <TotpOffDialog
          api={api}
          onDisabled={() => {
            onChange();
            notify(t('totp.turnedOff'));
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </section>
  );
}
