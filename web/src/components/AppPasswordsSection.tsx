import { useCallback, useMemo, useState } from 'react';
import { KeysApi, type ApiKey } from '../api/keys';
import type { ApiClient } from '../api/client';
import { formatDate, formatExactDate } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Icon } from './icons';
import { KeyDialog } from './KeyDialog';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';
import { SectionHead } from './SectionHead';

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

  const create = (
    <button type="button" className="button primary small" onClick={() => setCreating(true)}>
      <Icon name="plus" size={16} /> {t('keys.create')}
    </button>
  );

  return (
    <section className="settings-section" aria-labelledby="keys-title">
      <SectionHead id="keys-title" icon="key" title={t('keys.title')} help={t('keys.help')}>
        {state.status === 'ready' && state.items.length > 0 ? create : null}
      </SectionHead>
      {state.status === 'loading' ? (
        <ListSkeleton label={t('keys.loading')} />
      ) : state.status === 'error' ? (
        <ListError what="Your app passwords" error={state.error} onRetry={reload} />
      ) : state.items.length === 0 ? (
        <ListEmpty icon="key" title={t('keys.none')} text={t('keys.noneHint')}>
          {create}
        </ListEmpty>
      ) : (
        <>
          <ul className="item-list" aria-label={t('keys.title')}>
            {state.items.map((k) => {
              const expired = isExpired(k, now);
              return (
                <li key={k.id} className={`list-item${expired ? ' inactive' : ''}`} data-id={k.id} aria-label={k.name}>
                  <div className="item-main">
                    <div className="item-title">
                      <span className="item-name">{k.name}</span>
                      <span className={`badge ${k.read_only ? '' : 'badge-active'}`}>{k.read_only ? t('keys.readOnly') : t('keys.full')}</span>
                      {expired ? <span className="badge badge-expired">{t('keys.expired')}</span> : null}
                    </div>
                    <dl className="item-facts">
                      <div>
                        <dt>{t('keys.created')}</dt>
                        <dd title={formatExactDate(k.created)}>{formatDate(k.created, now)}</dd>
                      </div>
                      <div>
                        <dt>{t('keys.lastUsed')}</dt>
                        <dd className="key-last-used" title={k.last_used ? formatExactDate(k.last_used) : undefined}>
                          {k.last_used ? formatDate(k.last_used, now) : t('keys.never')}
                        </dd>
                      </div>
                      <div>
                        <dt>{t('keys.expires')}</dt>
                        <dd title={k.expires ? formatExactDate(k.expires) : undefined}>{k.expires ? formatDate(k.expires, now) : t('keys.never')}</dd>
                      </div>
                    </dl>
                  </div>
                  <div className="item-actions">
                    <button type="button" className="button small danger-text" onClick={() => setRevoking(k)}>
                      <Icon name="trash" size={16} /> {t('keys.revokeShort')}
                    </button>
                  </div>
                </li>
              );
            })}
          </ul>
          <div className="status-line muted">{t('keys.count', { count: state.items.length })}</div>
        </>
      )}
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
    </section>
  );
}
