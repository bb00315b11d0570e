import { useCallback, useMemo } from 'react';
import { recentChanges } from '../api/changes';
import type { StorageApi } from '../api/storage';
import { withBase } from '../lib/base';
import { kindOf } from '../lib/file-kind';
import { formatAgo, formatExactDate } from '../lib/format';
import { recentFiles } from '../lib/recent';
import { changeLabel, openUrl, placeOf } from '../lib/recent-labels';
import { onLinkClick, useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { KindIcon } from './icons';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { ToolButton } from './Toolbar';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';

/** How many feed entries the view reads: enough for a screenful of files after repeats are folded. */
const ENTRIES = 300;

/** Recent: the files the user, and those who share with them, changed lately (GET /api/changes/recent). */
export function RecentPage({ storage }: { storage: StorageApi }) {
  const load = useCallback(async (signal: AbortSignal) => recentFiles(await recentChanges(storage.client, { limit: ENTRIES, signal })), [storage]);
  const { state, reload } = useRemoteList(load);
  const me = storage.user;
  useTitle(t('nav.recent'));
  const items = useMemo(() => (state.status === 'ready' ? state.items : []), [state]);

  return (
    <div className="app">
      <AppHeader storage={storage} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">{t('nav.recent')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('recent.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
          </div>
        </div>
        {state.status === 'loading' ? (
          <ListSkeleton label={t('recent.loading')} />
        ) : state.status === 'error' ? (
          <ListError title={t('recent.failed')} error={state.error} onRetry={reload} />
        ) : items.length === 0 ? (
          <ListEmpty icon="clock" title={t('recent.none')} text={t('recent.noneText')} />
        ) : (
          <>
            <ul className="share-list" aria-label={t('recent.list')}>
              {items.map((f) => {
                const href = openUrl(f, me);
                return (
                  <li key={`${f.owner}/${f.folder.join('/')}/${f.name}`} className="with-me-item" data-name={f.name}>
                    <KindIcon kind={kindOf(f.name, true)} size={32} />
                    <div className="with-me-main">
                      <a className="entry-link with-me-name" href={withBase(href)} onClick={(e) => onLinkClick(e, href)}>
                        {f.name}
                      </a>
                      <span className="muted with-me-meta">
                        <span>{placeOf(f, me)}</span> · {changeLabel(f.type)}{' '}
                        <time dateTime={f.at} title={formatExactDate(f.at)}>
                          {formatAgo(f.at)}
                        </time>
                      </span>
                    </div>
                  </li>
                );
              })}
            </ul>
            <div className="status-line muted">{t('recent.count', { count: items.length })}</div>
          </>
        )}
      </main>
    </div>
  );
}
