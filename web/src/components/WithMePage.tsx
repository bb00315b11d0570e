import { useCallback, useMemo } from 'react';
import { GrantsApi, type ReceivedGrant } from '../api/grants';
import { messageOf } from '../api/errors';
import { StorageApi } from '../api/storage';
import { withBase } from '../lib/base';
import { kindOf } from '../lib/file-kind';
import { onLinkClick, useTitle } from '../lib/router';
import { withMeUrl } from '../lib/place';
import { AppHeader } from './AppHeader';
import { Banner, useBanner } from './Banner';
import { startDownloads } from './actions';
import { KindIcon } from './icons';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { ToolButton } from './Toolbar';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';

/** `[owner, ...path]` of a received item from its `/<owner>/<path>`. */
export const grantSegments = (g: ReceivedGrant): string[] => g.path.split('/').filter((s) => s !== '');

/** "Shared with me": what other accounts granted the signed-in user; a folder opens in the owner's tree, a file downloads. */
export function WithMePage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'with-me');
  const api = useMemo(() => new GrantsApi(storage.client, storage.user), [storage]);
  const load = useCallback((signal: AbortSignal) => api.received(signal), [api]);
  const { state, reload } = useRemoteList(load);
  const notify = useNotify();
  useTitle(t('nav.sharedWithMe'));

  const download = (g: ReceivedGrant) => {
    const [owner = '', ...path] = grantSegments(g);
    const name = path.at(-1) ?? '';
    const owned = new StorageApi(storage.client, owner);
    // Through the owner's path with a path token, as in one's own folders: a read grant may make one.
    startDownloads(owned, path.slice(0, -1), [{ name, is_file: true, size: 0, modified: '' }])
      .catch((e: unknown) => notify(messageOf(e), 'error'));
  };

  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">{t('nav.sharedWithMe')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('withMe.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
          </div>
        </div>
        {state.status === 'loading' ? (
          <ListSkeleton label={t('withMe.loading')} />
        ) : state.status === 'error' ? (
          <ListError title={t('withMe.failed')} error={state.error} onRetry={reload} />
        ) : state.items.length === 0 ? (
          <ListEmpty icon="users" title={t('withMe.none')} text={t('withMe.noneText')} />
        ) : (
          <>
            <ul className="share-list" aria-label={t('nav.sharedWithMe')}>
              {state.items.map((g) => {
                const [owner = '', ...path] = grantSegments(g);
                const name = path.at(-1) ?? owner;
                const href = withMeUrl(owner, path);
                return (
                  <li key={g.id} className="with-me-item" data-name={name} data-owner={owner}>
                    <KindIcon kind={g.is_file ? kindOf(name, true) : 'folder'} size={32} />
                    <div className="with-me-main">
                      {g.is_file ? (
                        <button type="button" className="entry-link with-me-name" onClick={() => download(g)}>
                          {name}
                        </button>
                      ) : (
                        <a className="entry-link with-me-name" href={withBase(href)} onClick={(e) => onLinkClick(e, href)}>
                          {name}
                        </a>
                      )}
                      <span className="muted with-me-meta">
                        {g.is_file ? t('shareItem.file') : t('list.folder')} · {t('withMe.from', { owner })} ·{' '}
                        <span className={`badge badge-permission`} data-permission={g.permission}>
                          {g.permission === 'write' ? t('people.canEdit') : t('people.canView')}
                        </span>
                        {g.groups?.length ? <> · {t('withMe.through', { also: g.direct ? 'yes' : 'no', count: g.groups.length, groups: g.groups.join(', ') })}</> : null}
                      </span>
                    </div>
                  </li>
                );
              })}
            </ul>
            <div className="status-line muted">{t('common.items', { count: state.items.length })}</div>
          </>
        )}
      </main>
    </div>
  );
}
