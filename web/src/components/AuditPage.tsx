import { useEffect, useMemo, useState } from 'react';
import { AuditApi, type AuditEvent, type AuditFilter } from '../api/audit';
import { ApiError, messageOf, networkError } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { onLinkClick, useTitle } from '../lib/router';
import { withBase } from '../lib/base';
import { formatDateTime } from '../lib/format';
import { AppHeader } from './AppHeader';
import { Skeleton } from './FolderStates';
import { Icon } from './icons';
import { ToolButton } from './Toolbar';
import { t } from '../lib/i18n';

const FAMILIES = ['', 'login.*', 'logout', 'password.*', 'totp.*', 'app_password.*', 'session.*', 'user.*', 'group.*', 'share.*', 'grant.*', 'path_token.*', 'webhook.*'];

type State = { status: 'loading' } | { status: 'error'; error: ApiError } | { status: 'ready'; events: AuditEvent[]; cursor: string | null; more: boolean };

/** What an entry's detail says, in a line (the reason of a failure first). */
function detailLine(e: AuditEvent): string {
  if (!e.detail) return '';
  return Object.entries(e.detail)
    .filter(([, v]) => v !== null && v !== undefined)
    .sort(([a], [b]) => (a === 'reason' ? -1 : b === 'reason' ? 1 : 0))
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}

/** For admins: the audit log, newest first, filtered by user and event family, older pages on demand. */
export function AuditPage({ storage }: { storage: StorageApi }) {
  const api = useMemo(() => new AuditApi(storage.client), [storage]);
  const [filter, setFilter] = useState<AuditFilter>({});
  const [userInput, setUserInput] = useState('');
  const [state, setState] = useState<State>({ status: 'loading' });
  const [generation, setGeneration] = useState(0);
  const [loadingMore, setLoadingMore] = useState(false);
  useTitle(t('nav.audit'));

  useEffect(() => {
    const ctl = new AbortController();
    setState({ status: 'loading' });
    api.page(filter, null, ctl.signal).then(
      (p) => !ctl.signal.aborted && setState({ status: 'ready', events: p.events, cursor: p.cursor, more: p.cursor !== null }),
      (e: unknown) => !ctl.signal.aborted && setState({ status: 'error', error: e instanceof ApiError ? e : networkError() }),
    );
    return () => ctl.abort();
  }, [api, filter, generation]);

  const older = async () => {
    if (state.status !== 'ready' || !state.cursor) return;
    setLoadingMore(true);
    try {
      const p = await api.page(filter, state.cursor);
      setState({ status: 'ready', events: [...state.events, ...p.events], cursor: p.cursor, more: p.cursor !== null });
    } catch (e) {
      setState({ status: 'error', error: e instanceof ApiError ? e : networkError() });
    } finally {
      setLoadingMore(false);
    }
  };

  const forbidden = state.status === 'error' && state.error.status === 403;
  return (
    <div className="app">
      <AppHeader storage={storage} />
      <main className="browser users-page audit-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">{t('nav.audit')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('audit.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={() => setGeneration((g) => g + 1)} />
          </div>
        </div>
        {!forbidden ? (
          <form
            className="audit-filters"
            aria-label={t('audit.filter')}
            onSubmit={(e) => {
              e.preventDefault();
              setFilter((f) => ({ ...f, user: userInput.trim() || undefined }));
            }}
          >
            <label>
              {t('audit.user')} <input type="search" name="user" aria-label={t('audit.user')} value={userInput} onChange={(e) => setUserInput(e.target.value)} placeholder={t('audit.any')} />
            </label>
            <label>
              {t('audit.events')}{' '}
              <select name="type" aria-label={t('audit.eventType')} value={filter.type ?? ''} onChange={(e) => setFilter((f) => ({ ...f, type: e.target.value || undefined }))}>
                {FAMILIES.map((family) => (
                  <option key={family} value={family}>
                    {family === '' ? t('audit.all') : family}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="button small">
              {t('audit.apply')}
            </button>
          </form>
        ) : null}
        {state.status === 'loading' ? (
          <Skeleton label={t('audit.loading')} />
        ) : state.status === 'error' ? (
          <div className="empty-state" role="alert">
            <span className="kind-icon kind-error">
              <Icon name={forbidden ? 'lock' : 'alert'} size={56} />
            </span>
            <h2>{forbidden ? t('audit.forbidden') : t('audit.failed')}</h2>
            <p className="muted">{forbidden ? t('audit.askAdmin') : messageOf(state.error)}</p>
            {forbidden ? (
              <div className="empty-actions">
                <a className="button primary" href={withBase('/browse/')} onClick={(e) => onLinkClick(e, '/browse/')}>
                  <Icon name="home" size={18} /> {t('states.goHome')}
                </a>
              </div>
            ) : null}
          </div>
        ) : state.events.length === 0 ? (
          <p className="muted audit-empty">{t('audit.none')}</p>
        ) : (
          <>
            <div className="audit-table-wrap">
              <table className="audit-table" aria-label={t('audit.table')}>
                <thead>
                  <tr>
                    <th scope="col">{t('audit.colTime')}</th>
                    <th scope="col">{t('audit.colEvent')}</th>
                    <th scope="col">{t('audit.colWho')}</th>
                    <th scope="col">{t('audit.colTarget')}</th>
                    <th scope="col">{t('audit.colOutcome')}</th>
                    <th scope="col">{t('audit.colFrom')}</th>
                    <th scope="col">{t('audit.colDetails')}</th>
                  </tr>
                </thead>
                <tbody>
                  {state.events.map((e) => (
                    // data-label: on a phone each event is a block, each cell a line under its name. The event's
                    // name and details are the log's own words (data, as the API and CLI show them): translate="no".
                    <tr key={e.id} data-id={e.id} data-type={e.type} className={`outcome-${e.outcome}`}>
                      <td data-label={t('audit.colTime')}>
                        <time dateTime={e.time} title={e.time}>
                          {formatDateTime(e.time)}
                        </time>
                      </td>
                      <td data-label={t('audit.colEvent')} className="audit-type" translate="no">
                        {e.type}
                      </td>
                      <td data-label={t('audit.colWho')}>{e.actor ?? '—'}</td>
                      <td data-label={t('audit.colTarget')} className="audit-target">
                        {/* One line (a session id is long and unbroken), the whole of it on hover. */}
                        <span className="audit-clip" title={e.target ?? undefined}>
                          {e.target ?? '—'}
                        </span>
                      </td>
                      <td data-label={t('audit.colOutcome')}>
                        <span className={`badge outcome ${e.outcome}`}>{t(`audit.outcome.${e.outcome}`)}</span>
                      </td>
                      <td data-label={t('audit.colFrom')} title={e.user_agent ?? undefined}>
                        {e.address ?? '—'}
                      </td>
                      <td data-label={t('audit.colDetails')} className="muted small audit-detail" translate="no">
                        {detailLine(e)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="status-line muted">
              {t('audit.shown', { count: state.events.length })}
              {state.more ? (
                <button type="button" className="button small" onClick={() => void older()} disabled={loadingMore}>
                  {loadingMore ? t('common.loading') : t('audit.older')}
                </button>
              ) : null}
            </div>
          </>
        )}
      </main>
    </div>
  );
}
