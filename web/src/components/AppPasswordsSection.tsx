import { useCallback, useMemo, useState } from 'react';
import { KeysApi, type ApiKey } from '../api/keys';
import type { ApiClient } from '../api/client';
import { formatDate, formatExactDate } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { KeyDialog } from './KeyDialog';
import { SettingsItem, SettingsListSection } from './SettingsListSection';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';

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
      title={t('keys.title')}
      about={t('keys.help')}
      count={(n) => t('keys.count', { count: n })}
      loading={t('keys.loading')}
      failed={t('keys.failed')}
      empty={{ title: t('keys.none'), text: t('keys.noneHint') }}
      addLabel={t('keys.create')}
      onAdd={() => setCreating(true)}
      list={state}
      onRetry={reload}
      dialogs={
        <>
          {creating ? <KeyDialog api={api} user={user} onCreated={reload} onClose={() => setCreating(false)} /> : null}
          {revoking ? (
            <ConfirmDialog
              title={t('keys.revokeTitle', { name: revoking.name })}
              warning={t('keys.revokeWarning')}
              label={t('keys.revoke')}
              busyLabel={t('keys.revoking')}
              onConfirm={async () => {
                await api.revoke(revoking.id);
                drop((k) => k.id !== revoking.id);
                notify(t('keys.revoked', { name: revoking.name }));
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
                  <span className={`badge ${k.read_only ? '' : 'badge-active'}`}>{k.read_only ? t('keys.readOnly') : t('keys.full')}</span>
                  {expired ? <span className="badge badge-expired">{t('keys.expired')}</span> : null}
                </>
              }
              facts={[
                { label: t('keys.created'), value: formatDate(k.created, now), title: formatExactDate(k.created) },
                { label: t('keys.lastUsed'), value: k.last_used ? formatDate(k.last_used, now) : t('keys.never'), title: k.last_used ? formatExactDate(k.last_used) : undefined, className: 'key-last-used' },
                { label: t('keys.expires'), value: k.expires ? formatDate(k.expires, now) : t('keys.never'), title: k.expires ? formatExactDate(k.expires) : undefined },
              ]}
              action={{ label: t('keys.revokeShort'), onClick: () => setRevoking(k) }}
            />
          );
        })
      }
    </SettingsListSection>
  );
}
