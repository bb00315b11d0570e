import { useMemo, useState } from 'react';
import { SharesApi, shareSegments, type Share } from '../api/shares';
import type { StorageApi } from '../api/storage';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { Banner, useBanner } from './Banner';
import { SharesEmpty, SharesError } from './SharesStates';
import { Skeleton } from './FolderStates';
import { RevokeDialog } from './RevokeDialog';
import { ShareItem } from './ShareItem';
import { ToolButton } from './Toolbar';
import { useNotify } from './Toasts';
import { useShares } from './useShares';
import { t } from '../lib/i18n';

/** "Shared by me": every share link of the signed-in user, with its state, copy and revoke. */
export function SharedPage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'shared');
  const api = useMemo(() => new SharesApi(storage.client, storage.user), [storage]);
  const { state, reload, revoke } = useShares(api);
  const [revoking, setRevoking] = useState<Share | null>(null);
  const notify = useNotify();
  useTitle(t('nav.sharedByMe'));
  const nameOf = (s: Share) => shareSegments(s).at(-1) ?? t('nav.myFiles');

  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">{t('nav.sharedByMe')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('sharedByMe.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
          </div>
        </div>
        {state.status === 'loading' ? (
          <Skeleton label={t('sharedByMe.loading')} />
        ) : state.status === 'error' ? (
          <SharesError error={state.error} onRetry={reload} />
        ) : state.shares.length === 0 ? (
          <SharesEmpty />
        ) : (
          <>
            <ul className="share-list" aria-label={t('sharedByMe.links')}>
              {state.shares.map((s) => (
                <ShareItem
                  key={s.id}
                  share={s}
                  onRevoke={() => setRevoking(s)}
                  onCopied={(ok, url) => notify(ok ? t('sharedByMe.copied', { name: nameOf(s) }) : t('sharedByMe.copyThis', { url }), ok ? 'info' : 'error')}
                />
              ))}
            </ul>
            <div className="status-line muted">{t('sharedByMe.count', { count: state.shares.length })}</div>
          </>
        )}
      </main>
      {revoking ? (
        <RevokeDialog
          name={nameOf(revoking)}
          onConfirm={async () => {
            await revoke(revoking.id);
            notify(t('sharedByMe.revoked', { name: nameOf(revoking) }));
          }}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </div>
  );
}
