import { useCallback, useMemo, useState } from 'react';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { TrashApi, type TrashItem } from '../api/trash';
import { kindOf } from '../lib/file-kind';
import { formatDate, formatExactDate, formatSize } from '../lib/format';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { ConfirmDialog } from './ConfirmDialog';
import { KindIcon } from './icons';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import { ToolButton } from './Toolbar';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';
import { announceStorageChange } from '../lib/usage-events';

/** The trash (--trash-days): deleted items of the signed-in user, to restore or delete for good. */
export function TrashPage({ storage }: { storage: StorageApi }) {
  const api = useMemo(() => new TrashApi(storage.client), [storage]);
  const load = useCallback((signal: AbortSignal) => api.list(signal), [api]);
  const { state, reload } = useRemoteList(load);
  const notify = useNotify();
  const { me, reload: reloadMe } = useAccount();
  const [confirm, setConfirm] = useState<{ kind: 'remove'; item: TrashItem } | { kind: 'empty' } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  useTitle(t('nav.trash'));

  const restore = (item: TrashItem) => {
    setBusy(item.id);
    api.restore(item.id).then(
      (path) => {
        notify(path === item.path ? t('trash.restored', { name: item.name }) : t('trash.restoredAs', { name: item.name, as: path.split('/').at(-1) ?? item.name }));
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
          <h1 className="page-title">{t('nav.trash')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('trash.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
            <ToolButton icon="trash" label={t('trash.empty')} onClick={() => setConfirm({ kind: 'empty' })} disabled={state.status !== 'ready' || state.items.length === 0} />
          </div>
        </div>
        {days > 0 ? <p className="muted trash-note">{t('trash.note', { days })}</p> : null}
        {state.status === 'loading' ? (
          <ListSkeleton label={t('trash.loading')} />
        ) : state.status === 'error' ? (
          <ListError title={t('trash.failed')} error={state.error} onRetry={reload} />
        ) : state.items.length === 0 ? (
          <ListEmpty icon="trash" title={t('trash.isEmpty')} text={t('trash.isEmptyText')} />
        ) : (
          <>
            <ul className="share-list" aria-label={t('nav.trash')}>
              {state.items.map((item) => (
                <li key={item.id} className="with-me-item trash-item" data-name={item.name}>
                  <KindIcon kind={item.is_file ? kindOf(item.name, true) : 'folder'} size={32} />
                  <div className="with-me-main">
                    <span className="with-me-name">{item.name}</span>
                    <span className="muted with-me-meta">
                      {item.path.split('/').slice(2, -1).join('/') || t('nav.myFiles')} · {formatSize(item.size)} · {t('trash.deleted')} <time dateTime={item.deleted_at} title={formatExactDate(item.deleted_at)}>{formatDate(item.deleted_at)}</time>
                    </span>
                  </div>
                  <span className="spacer" />
                  <button type="button" className="button small" disabled={busy === item.id} onClick={() => restore(item)}>
                    {t('trash.restore')}
                  </button>
                  <button type="button" className="button small danger" disabled={busy === item.id} onClick={() => setConfirm({ kind: 'remove', item })}>
                    {t('trash.deleteForever')}
                  </button>
                </li>
              ))}
            </ul>
            <div className="status-line muted">{t('common.items', { count: state.items.length })}</div>
          </>
        )}
      </main>
      {confirm ? (
        <ConfirmDialog
          title={confirm.kind === 'empty' ? t('trash.emptyTitle') : t('trash.deleteTitle', { name: confirm.item.name })}
          warning={confirm.kind === 'empty' ? t('trash.emptyWarning') : t('trash.deleteWarning')}
          label={confirm.kind === 'empty' ? t('trash.empty') : t('trash.deleteForever')}
          busyLabel={t('delete.busy')}
          onConfirm={async () => {
            if (confirm.kind === 'empty') await api.empty();
            else await api.remove(confirm.item.id);
            setConfirm(null);
            reload();
            reloadMe();
            // What the trash held counted against the quota: the header's figure drops.
            announceStorageChange();
          }}
          onClose={() => setConfirm(null)}
        />
      ) : null}
    </div>
  );
}
