import { useState } from 'react';
import type { StorageApi } from '../api/storage';
import { formatSize } from '../lib/format';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { AppPasswordsSection } from './AppPasswordsSection';
import { Banner, useBanner } from './Banner';
import { PasswordSection } from './PasswordSection';
import { SessionsSection } from './SessionsSection';
import { SshKeysSection } from './SshKeysSection';
import { TotpSection } from './TotpSection';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';
import { LanguageSection } from './LanguageSection';

/** The signed-in user's own account: password, sessions, app passwords, SSH keys, two-step verification. */
export function SettingsPage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'settings');
  const { me, error, api, reload } = useAccount();
  // A password change ends the other sessions: the list is read again.
  const [sessionsKey, setSessionsKey] = useState(0);
  useTitle(t('settings.title'));
  if (!api) return null;
  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser settings-page">
        <div className="toolbar">
          <h1 className="page-title">{t('settings.title')}</h1>
          <span className="spacer" />
          {me ? (
            <span className="muted small account-summary">
              {me.username}
              {me.admin ? ` · ${t('settings.administrator')}` : ''} · {me.quota !== null ? t('settings.usedOf', { used: formatSize(me.used), quota: formatSize(me.quota) }) : t('settings.used', { used: formatSize(me.used) })}
            </span>
          ) : null}
        </div>
        <div className="settings-sections">
          <LanguageSection />
          <PasswordSection api={api} user={storage.user} onChanged={() => setSessionsKey((k) => k + 1)} />
          <TotpSection api={api} me={me} error={error} onChange={reload} />
          <AppPasswordsSection client={storage.client} user={storage.user} />
          <SshKeysSection client={storage.client} />
          <SessionsSection api={api} reloadKey={sessionsKey} />
        </div>
      </main>
    </div>
  );
}
