import { useCallback, useState } from 'react';
import type { AccountApi, Session } from '../api/account';
import { clientName } from '../lib/account-rules';
import { formatDate, formatExactDate } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Icon } from './icons';
import { ListError, ListSkeleton } from './SectionStates';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';
import { SectionHead } from './SectionHead';

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
  const nameOf = (s: Session) => clientName(s.client) ?? t('sessions.unknown');

  return (
    <section className="settings-section" aria-labelledby="sessions-title">
      <SectionHead id="sessions-title" icon="device" title={t('sessions.title')} help={t('sessions.help')}>
        <button type="button" className="icon-button" aria-label={t('sessions.refresh')} title={t('sessions.refreshShort')} onClick={reload}>
          <Icon name="retry" size={18} />
        </button>
      </SectionHead>
      {state.status === 'loading' ? (
        <ListSkeleton label={t('sessions.loading')} />
      ) : state.status === 'error' ? (
        <ListError title={t('sessions.failed')} error={state.error} onRetry={reload} />
      ) : (
        <>
          <ul className="item-list" aria-label={t('sessions.title')}>
            {state.items.map((s) => (
              <li key={s.id} className="list-item" data-id={s.id} aria-label={s.current ? t('sessions.thisDeviceLabel', { name: nameOf(s) }) : nameOf(s)}>
                <div className="item-main">
                  <div className="item-title">
                    <span className="item-name" title={s.client ?? undefined}>
                      {nameOf(s)}
                    </span>
                    {s.current ? <span className="badge badge-active">{t('sessions.thisDevice')}</span> : null}
                  </div>
                  <dl className="item-facts">
                    <div>
                      <dt>{t('sessions.address')}</dt>
                      <dd>{s.address ?? '—'}</dd>
                    </div>
                    <div>
                      <dt>{t('sessions.signedIn')}</dt>
                      <dd title={formatExactDate(s.created_at)}>{formatDate(s.created_at, now)}</dd>
                    </div>
                    <div>
                      <dt>{t('keys.lastUsed')}</dt>
                      <dd title={formatExactDate(s.last_used_at)}>{formatDate(s.last_used_at, now)}</dd>
                    </div>
                  </dl>
                </div>
                <div className="item-actions">
                  {s.current ? (
                    <span className="muted small">{t('sessions.usingNow')}</span>
                  ) : (
                    <button type="button" className="button small danger-text" onClick={() => setRevoking(s)}>
                      <Icon name="logout" size={16} /> {t('nav.signOut')}
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ul>
          <div className="status-line muted">{t('sessions.count', { count: state.items.length })}</div>
        </>
      )}
      {revoking ? (
        <ConfirmDialog
          title={t('sessions.signOutTitle', { name: nameOf(revoking) })}
          warning={t('sessions.signOutWarning', { name: revoking.address ? `${nameOf(revoking)}, ${revoking.address}` : nameOf(revoking) })}
          label={t('sessions.signOut')}
          busyLabel={t('sessions.signingOut')}
          onConfirm={async () => {
            await api.revokeSession(revoking.id);
            drop((s) => s.id !== revoking.id);
            notify(t('sessions.signedOut', { name: nameOf(revoking) }));
          }}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </section>
  );
}
