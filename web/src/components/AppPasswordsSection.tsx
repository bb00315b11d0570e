import { useCallback, useMemo, useState } from 'react';
import { KeysApi, type ApiKey } from '../api/keys';
import type { ApiClient } from '../api/client';
import { formatDate, formatExactDate, plural } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Icon } from './icons';
import { KeyDialog } from './KeyDialog';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
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

  const create = (
    <button type="button" className="button primary small" onClick={() => setCreating(true)}>
      <Icon name="plus" size={16} /> Create app password
    </button>
  );

  return (
    <section className="settings-section" aria-labelledby="keys-title">
      <header className="section-head">
        <Icon name="key" />
        <div>
          <h2 id="keys-title">App passwords</h2>
          <p className="muted small">For WebDAV clients, sync tools and scripts: each gets its own password, which you can make read-only and revoke without changing your own.</p>
        </div>
        {state.status === 'ready' && state.items.length > 0 ? create : null}
      </header>
      {state.status === 'loading' ? (
        <ListSkeleton label="Loading app passwords" />
      ) : state.status === 'error' ? (
        <ListError what="Your app passwords" error={state.error} onRetry={reload} />
      ) : state.items.length === 0 ? (
        <ListEmpty icon="key" title="No app passwords yet" text="Make one for each program that needs your files, instead of giving it your password.">
          {create}
        </ListEmpty>
      ) : (
        <>
          <ul className="item-list" aria-label="App passwords">
            {state.items.map((k) => {
              const expired = isExpired(k, now);
              return (
                <li key={k.id} className={`list-item${expired ? ' inactive' : ''}`} data-id={k.id} aria-label={k.name}>
                  <div className="item-main">
                    <div className="item-title">
                      <span className="item-name">{k.name}</span>
                      <span className={`badge ${k.read_only ? '' : 'badge-active'}`}>{k.read_only ? 'Read-only' : 'Full access'}</span>
                      {expired ? <span className="badge badge-expired">Expired</span> : null}
                    </div>
                    <dl className="item-facts">
                      <div>
                        <dt>Created</dt>
                        <dd title={formatExactDate(k.created)}>{formatDate(k.created, now)}</dd>
                      </div>
                      <div>
                        <dt>Last used</dt>
                        <dd className="key-last-used" title={k.last_used ? formatExactDate(k.last_used) : undefined}>
                          {k.last_used ? formatDate(k.last_used, now) : 'Never'}
                        </dd>
                      </div>
                      <div>
                        <dt>Expires</dt>
                        <dd title={k.expires ? formatExactDate(k.expires) : undefined}>{k.expires ? formatDate(k.expires, now) : 'Never'}</dd>
                      </div>
                    </dl>
                  </div>
                  <div className="item-actions">
                    <button type="button" className="button small danger-text" onClick={() => setRevoking(k)}>
                      <Icon name="trash" size={16} /> Revoke
                    </button>
                  </div>
                </li>
              );
            })}
          </ul>
          <div className="status-line muted">{plural(state.items.length, 'app password')}</div>
        </>
      )}
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
    </section>
  );
}
