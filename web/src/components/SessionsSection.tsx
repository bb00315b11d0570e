import { useCallback, useState } from 'react';
import type { AccountApi, Session } from '../api/account';
import { clientName } from '../lib/account-rules';
import { formatDate, formatExactDate, plural } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Icon } from './icons';
import { ListError, ListSkeleton } from './SectionStates';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';

/** This device first, then the most recently used. */
function order(a: Session, b: Session): number {
  if (a.current !== b.current) return a.current ? -1 : 1;
  return b.last_used_at.localeCompare(a.last_used_at);
}

/** Where you are signed in: each session's client, address and times; any but this one can be signed out. */
export function SessionsSection({ api, reloadKey }: { api: AccountApi; reloadKey: number }) {
  const load = useCallback((signal: AbortSignal) => api.sessions(signal).then((s) => [...s].sort(order)), [api, reloadKey]);
  const { state, reload, drop } = useRemoteList(load);
  const [revoking, setRevoking] = useState<Session | null>(null);
  const notify = useNotify();
  const [now] = useState(() => new Date());
  const nameOf = (s: Session) => clientName(s.client) ?? 'Unknown client';

  return (
    <section className="settings-section" aria-labelledby="sessions-title">
      <header className="section-head">
        <Icon name="device" />
        <div>
          <h2 id="sessions-title">Sessions</h2>
          <p className="muted small">Browsers and apps signed in to your account. Sign out any you do not recognise, then change your password.</p>
        </div>
        <button type="button" className="icon-button" aria-label="Refresh sessions" title="Refresh" onClick={reload}>
          <Icon name="retry" size={18} />
        </button>
      </header>
      {state.status === 'loading' ? (
        <ListSkeleton label="Loading sessions" />
      ) : state.status === 'error' ? (
        <ListError what="Your sessions" error={state.error} onRetry={reload} />
      ) : (
        <>
          <ul className="item-list" aria-label="Sessions">
            {state.items.map((s) => (
              <li key={s.id} className="list-item" data-id={s.id} aria-label={`${nameOf(s)}${s.current ? ', this device' : ''}`}>
                <div className="item-main">
                  <div className="item-title">
                    <span className="item-name" title={s.client ?? undefined}>
                      {nameOf(s)}
                    </span>
                    {s.current ? <span className="badge badge-active">This device</span> : null}
                  </div>
                  <dl className="item-facts">
                    <div>
                      <dt>Address</dt>
                      <dd>{s.address ?? '—'}</dd>
                    </div>
                    <div>
                      <dt>Signed in</dt>
                      <dd title={formatExactDate(s.created_at)}>{formatDate(s.created_at, now)}</dd>
                    </div>
                    <div>
                      <dt>Last used</dt>
                      <dd title={formatExactDate(s.last_used_at)}>{formatDate(s.last_used_at, now)}</dd>
                    </div>
                  </dl>
                </div>
                <div className="item-actions">
                  {s.current ? (
                    <span className="muted small">You are using it now</span>
                  ) : (
                    <button type="button" className="button small danger-text" onClick={() => setRevoking(s)}>
                      <Icon name="logout" size={16} /> Sign out
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ul>
          <div className="status-line muted">{plural(state.items.length, 'session')}</div>
        </>
      )}
      {revoking ? (
        <ConfirmDialog
          title={`Sign out ${nameOf(revoking)}?`}
          warning={`That session (${nameOf(revoking)}${revoking.address ? `, ${revoking.address}` : ''}) is signed out at once; whoever uses it must sign in again.`}
          label="Sign out session"
          busyLabel="Signing out…"
          onConfirm={async () => {
            await api.revokeSession(revoking.id);
            drop((s) => s.id !== revoking.id);
            notify(`${nameOf(revoking)} was signed out.`);
          }}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </section>
  );
}
