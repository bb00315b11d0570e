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

/** The signed-in user's own account: password, sessions, app passwords, SSH keys, two-step verification. */
export function SettingsPage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'settings');
  const { me, error, api, reload } = useAccount();
  // A password change ends the other sessions: the list is read again.
  const [sessionsKey, setSessionsKey] = useState(0);
  useTitle('Settings');
  if (!api) return null;
  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser settings-page">
        <div className="toolbar">
          <h1 className="page-title">Settings</h1>
          <span className="spacer" />
          {me ? (
            <span className="muted small account-summary">
              {me.username}
              {me.admin ? ' · administrator' : ''} · {formatSize(me.used)} used{me.quota !== null ? ` of ${formatSize(me.quota)}` : ''}
            </span>
          ) : null}
        </div>
        <div className="settings-sections">
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
