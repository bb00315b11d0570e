import { useCallback, useMemo, useState } from 'react';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { TrashApi, type TrashItem } from '../api/trash';
import { kindOf } from '../lib/file-kind';
import { formatDate, formatExactDate, formatSize, plural } from '../lib/format';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { ConfirmDialog } from './ConfirmDialog';
import { KindIcon } from './icons';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { ToolButton } from './Toolbar';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { useAccount } from './useAccount';

/** The trash (--trash-days): deleted items of the signed-in user, to restore or delete for good. */
export function TrashPage({ storage }: { storage: StorageApi }) {
  const api = useMemo(() => new TrashApi(storage.client), [storage]);
  const load = useCallback((signal: AbortSignal) => api.list(signal), [api]);
  const { state, reload } = useRemoteList(load);
  const notify = useNotify();
  const { me, reload: reloadMe } = useAccount();
  const [confirm, setConfirm] = useState<{ kind: 'remove'; item: TrashItem } | { kind: 'empty' } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  useTitle('Trash');

  const restore = (item: TrashItem) => {
    setBusy(item.id);
    api.restore(item.id).then(
      (path) => {
        notify(path === item.path ? `${item.name} is back in its folder.` : `${item.name} is back, as ${path.split('/').at(-1) ?? item.name} (its name was taken).`);
        reload();
      },
      (e: unknown) => notify(messageOf(e), 'error'),
    ).finally(() => setBusy(null));
  };
  const days = me?.trash_days ?? 0;

  return (
    <div className="app">
      <AppHeader storage={storage} />
      <main className="browser shared-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">Trash</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label="Trash actions">
            <ToolButton icon="retry" label="Refresh" onClick={reload} />
            <ToolButton icon="trash" label="Empty trash" onClick={() => setConfirm({ kind: 'empty' })} disabled={state.status !== 'ready' || state.items.length === 0} />
          </div>
        </div>
        {days > 0 ? <p className="muted trash-note">Deleted items stay here for {plural(days, 'day')}, then they are deleted for good. They count towards your storage until then.</p> : null}
        {state.status === 'loading' ? (
          <ListSkeleton label="Loading your trash" />
        ) : state.status === 'error' ? (
          <ListError what="your trash" error={state.error} onRetry={reload} />
        ) : state.items.length === 0 ? (
          <ListEmpty icon="trash" title="The trash is empty" text="Files and folders you delete appear here, so you can bring them back." />
        ) : (
          <>
            <ul className="share-list" aria-label="Trash">
              {state.items.map((item) => (
                <li key={item.id} className="with-me-item trash-item" data-name={item.name}>
                  <KindIcon kind={item.is_file ? kindOf(item.name, true) : 'folder'} size={32} />
                  <div className="with-me-main">
                    <span className="with-me-name">{item.name}</span>
                    <span className="muted with-me-meta">
                      {item.path.split('/').slice(2, -1).join('/') || 'My files'} · {formatSize(item.size)} · deleted <time dateTime={item.deleted_at} title={formatExactDate(item.deleted_at)}>{formatDate(item.deleted_at)}</time>
                    </span>
                  </div>
                  <span className="spacer" />
                  <button type="button" className="button small" disabled={busy === item.id} onClick={() => restore(item)}>
                    Restore
                  </button>
                  <button type="button" className="button small danger" disabled={busy === item.id} onClick={() => setConfirm({ kind: 'remove', item })}>
                    Delete forever
                  </button>
                </li>
              ))}
            </ul>
            <div className="status-line muted">{plural(state.items.length, 'item')}</div>
          </>
        )}
      </main>
      {confirm ? (
        <ConfirmDialog
          title={confirm.kind === 'empty' ? 'Empty the trash?' : `Delete ${confirm.item.name} forever?`}
          warning={confirm.kind === 'empty' ? 'Everything in the trash is deleted for good. This cannot be undone.' : 'It is deleted for good. This cannot be undone.'}
          label={confirm.kind === 'empty' ? 'Empty trash' : 'Delete forever'}
          busyLabel="Deleting…"
          onConfirm={async () => {
            if (confirm.kind === 'empty') await api.empty();
            else await api.remove(confirm.item.id);
            setConfirm(null);
            reload();
            reloadMe();
          }}
          onClose={() => setConfirm(null)}
        />
      ) : null}
    </div>
  );
}
