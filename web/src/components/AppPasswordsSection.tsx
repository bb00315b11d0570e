import { useCallback, useMemo, useState } from 'react';
import { KeysApi, type ApiKey } from '../api/keys';
import type { ApiClient } from '../api/client';
import { formatDate, formatExactDate } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { KeyDialog } from './KeyDialog';
import { SettingsItem, SettingsListSection } from './SettingsListSection';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';

const isExpired = (k: ApiKey, now: Date) => k.expires !== null && new Date(k.expires).getTime() <= now.getTime();

/** App passwords (API keys): for WebDAV clients and scripts, each revocable on its own, never the account password. */
export function AppPasswordsSection({ client, user }: { client: ApiClient; user: string }) {
  const api = useMemo(() => new KeysApi(client), [client]);
  const load = useCallback((signal: AbortSignal) => api.list(signal).then((keys) => [...keys].sort((a, b) => b.created.localeCompare(a.created))), [api]);
  const { state, reload, drop } = useRemoteList(load);
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const notify = useNotify();
  const [now] = useState(() => new Date());

  return (
    <SettingsListSection
      id="keys"
      icon="key"
      title="App passwords"
      about="For WebDAV clients, sync tools and scripts: each gets its own password, which you can make read-only and revoke without changing your own."
      noun="app password"
      nouns="app passwords"
      empty={{ title: 'No app passwords yet', text: 'Make one for each program that needs your files, instead of giving it your password.' }}
      addLabel="Create app password"
      onAdd={() => setCreating(true)}
      list={state}
      onRetry={reload}
      dialogs={
        <>
          {creating ? <KeyDialog api={api} user={user} onCreated={reload} onClose={() => setCreating(false)} /> : null}
          {revoking ? (
            <ConfirmDialog
              title={`Revoke “${revoking.name}”?`}
              warning="Every program using this app password loses access at once. This cannot be undone; you can make a new one."
              label="Revoke app password"
              busyLabel="Revoking…"
              onConfirm={async () => {
                await api.revoke(revoking.id);
                drop((k) => k.id !== revoking.id);
                notify(`“${revoking.name}” no longer works.`);
              }}
              onClose={() => setRevoking(null)}
            />
          ) : null}
        </>
      }
    >
      {(items) =>
        items.map((k) => {
          const expired = isExpired(k, now);
          return (
            <SettingsItem
              key={k.id}
              id={k.id}
              name={k.name}
              inactive={expired}
              badges={
                <>
                  <span className={`badge ${k.read_only ? '' : 'badge-active'}`}>{k.read_only ? 'Read-only' : 'Full access'}</span>
                  {expired ? <span className="badge badge-expired">Expired</span> : null}
                </>
              }
              facts={[
                { label: 'Created', value: formatDate(k.created, now), title: formatExactDate(k.created) },
                { label: 'Last used', value: k.last_used ? formatDate(k.last_used, now) : 'Never', title: k.last_used ? formatExactDate(k.last_used) : undefined, className: 'key-last-used' },
                { label: 'Expires', value: k.expires ? formatDate(k.expires, now) : 'Never', title: k.expires ? formatExactDate(k.expires) : undefined },
              ]}
              action={{ label: 'Revoke', onClick: () => setRevoking(k) }}
            />
          );
        })
      }
    </SettingsListSection>
  );
}
