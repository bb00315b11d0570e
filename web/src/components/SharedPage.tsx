import { useMemo, useState } from 'react';
import { SharesApi, shareSegments, type Share } from '../api/shares';
import type { StorageApi } from '../api/storage';
import { plural } from '../lib/format';
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

/** "Shared by me": every share link of the signed-in user, with its state, copy and revoke. */
export function SharedPage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'shared');
  const api = useMemo(() => new SharesApi(storage.client, storage.user), [storage]);
  const { state, reload, revoke } = useShares(api);
  const [revoking, setRevoking] = useState<Share | null>(null);
  const notify = useNotify();
  useTitle('Shared by me');
  const nameOf = (s: Share) => shareSegments(s).at(-1) ?? 'My files';

  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">Shared by me</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label="Share actions">
            <ToolButton icon="retry" label="Refresh" onClick={reload} />
          </div>
        </div>
        {state.status === 'loading' ? (
          <Skeleton label="Loading share links" />
        ) : state.status === 'error' ? (
          <SharesError error={state.error} onRetry={reload} />
        ) : state.shares.length === 0 ? (
          <SharesEmpty />
        ) : (
          <>
            <ul className="share-list" aria-label="Share links">
              {state.shares.map((s) => (
                <ShareItem
                  key={s.id}
                  share={s}
                  onRevoke={() => setRevoking(s)}
                  onCopied={(ok, url) => notify(ok ? `Link to “${nameOf(s)}” copied.` : `Copy this link: ${url}`, ok ? 'info' : 'error')}
                />
              ))}
            </ul>
            <div className="status-line muted">{plural(state.shares.length, 'link')}</div>
          </>
        )}
      </main>
      {revoking ? (
        <RevokeDialog
          name={nameOf(revoking)}
          onConfirm={async () => {
            await revoke(revoking.id);
            notify(`The link to “${nameOf(revoking)}” no longer works.`);
          }}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </div>
  );
}
