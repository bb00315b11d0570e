import { useCallback, useMemo } from 'react';
import { GrantsApi, type ReceivedGrant } from '../api/grants';
import { isInside } from '../api/paths';
import { StorageApi } from '../api/storage';
import { sharedPlace } from '../lib/place';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { Browser } from './Browser';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { useRemoteList } from './useRemoteList';
import { grantSegments } from './WithMePage';
import { t } from '../lib/i18n';

/**
 * A folder inside another account's tree that was shared with the user
 * (/with-me/<owner>/<path>/): the received grant that holds it decides where
 * the breadcrumbs start and whether writing is offered; the file manager then
 * works on the owner's paths with the user's own token.
 */
export function SharedFolder({ account, ownerPath }: { account: StorageApi; ownerPath: readonly string[] }) {
  const api = useMemo(() => new GrantsApi(account.client, account.user), [account]);
  const load = useCallback((signal: AbortSignal) => api.received(signal), [api]);
  const { state, reload } = useRemoteList(load);
  const [owner = '', ...segments] = ownerPath;
  const grant = useMemo(() => {
    if (state.status !== 'ready') return undefined;
    // The innermost folder grant holding this path: a write grant inside a read one gives write there.
    const holding = state.items.filter((g: ReceivedGrant) => !g.is_file && isInside(ownerPath, grantSegments(g)));
    return holding.sort((a, b) => grantSegments(b).length - grantSegments(a).length)[0] ?? null;
  }, [state, ownerPath]);
  const storage = useMemo(() => new StorageApi(account.client, owner), [account, owner]);
  const root = useMemo(() => (grant ? grantSegments(grant).slice(1) : []), [grant]);
  const place = useMemo(() => sharedPlace(owner, root, grant?.permission === 'write'), [owner, root, grant]);
  useTitle(grant === null ? t('withMe.notSharedTitle') : '');

  if (grant) return <Browser key={grant.id} storage={storage} segments={segments} place={place} account={account} />;
  return (
    <div className="app">
      <AppHeader storage={account} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        {state.status === 'loading' ? (
          <ListSkeleton label={t('withMe.loading')} />
        ) : state.status === 'error' ? (
          <ListError title={t('withMe.failed')} error={state.error} onRetry={reload} />
        ) : (
          <ListEmpty icon="users" title={t('withMe.folderNotShared')} text={t('withMe.folderNotSharedText')} />
        )}
      </main>
    </div>
  );
}
