import { useCallback, useMemo, useState } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { VersionsApi, type FileVersion } from '../api/trash';
import { kindOf } from '../lib/file-kind';
import { formatAgo, formatDateTime, formatExactDate, formatSize } from '../lib/format';
import { saveAs } from './actions';
import { Dialog } from './Dialog';
import { ListError, ListSkeleton } from './SectionStates';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';

/** A version preview reads at most this much: enough to recognise a text, never a whole big file. */
const PREVIEW_BYTES = 64 * 1024;

/** One row of the dialog: the file as it is now (no id), or an earlier version. */
type Row = { readonly id?: string; readonly size: number; readonly modified: string };

type Preview = { key: string; label: string } & ({ status: 'loading' } | { status: 'ready'; text: string; truncated: boolean } | { status: 'error'; message: string });

/**
 * A file's earlier contents (--versions), under the file as it is now (marked
 * "Current"): each with its full date and time to the second and how long
 * ago, so versions made moments apart read apart; a text version can be
 * previewed in place, downloaded, or restored (what the file holds now then
 * becomes a version).
 */
export function VersionsDialog({ storage, path: given, current, onRestored, onClose }: { storage: StorageApi; path: Segments; current: Entry; onRestored: () => void; onClose: () => void }) {
  const api = useMemo(() => new VersionsApi(storage), [storage]);
  // By content, not identity: the list is read again only for another file, not on every render of the page.
  const pathKey = given.join('\0');
  const path = useMemo(() => pathKey.split('\0'), [pathKey]);
  const load = useCallback((signal: AbortSignal) => api.list(path, signal), [api, path]);
  const { state, reload } = useRemoteList(load);
  const notify = useNotify();
  const [busy, setBusy] = useState<string | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const name = path.at(-1) ?? '';
  const text = kindOf(name, true) === 'text';
  const keyOf = (r: Row) => r.id ?? 'current';

  const download = (r: Row) => {
    api.downloadUrl(path, r.id).then((url) => saveAs(url, name), (e: unknown) => notify(messageOf(e), 'error'));
  };
  const restore = (v: FileVersion) => {
    setBusy(v.id);
    api.restore(path, v.id).then(
      () => {
        notify(t('versions.restored', { name, date: formatExactDate(v.modified) }));
        setPreview(null);
        onRestored();
        reload();
      },
      (e: unknown) => notify(messageOf(e), 'error'),
    ).finally(() => setBusy(null));
  };
  const show = (r: Row) => {
    const key = keyOf(r);
    if (preview?.key === key) return setPreview(null);
    const label = t('versions.previewOf', { date: formatDateTime(r.modified) });
    setPreview({ key, label, status: 'loading' });
    api.readText(path, r.id, PREVIEW_BYTES).then(
      (read) => setPreview((p) => (p?.key === key ? { key, label, status: 'ready', ...read } : p)),
      (e: unknown) => setPreview((p) => (p?.key === key ? { key, label, status: 'error', message: messageOf(e) } : p)),
    );
  };

  const item = (r: Row, v?: FileVersion) => {
    const key = keyOf(r);
    const open = preview?.key === key ? preview : null;
    return (
      <li key={key} className="version-item" data-version={r.id} data-current={v ? undefined : 'true'}>
        <div className="version-main">
          <div className="version-when">
            <time dateTime={r.modified} title={formatExactDate(r.modified)}>
              {formatDateTime(r.modified)}
            </time>
            {v ? null : <span className="badge badge-current">{t('versions.current')}</span>}
          </div>
          <div className="muted small">
            {/* A version's time is when it was replaced; the current content's, when it was saved. */}
            {v ? t('versions.replaced', { ago: formatAgo(r.modified) }) : t('versions.saved', { ago: formatAgo(r.modified) })} · {formatSize(r.size)}
          </div>
        </div>
        <div className="version-actions">
          {text ? (
            <button type="button" className="button small" aria-expanded={open !== null} onClick={() => show(r)}>
              {open ? t('versions.hidePreview') : t('versions.preview')}
            </button>
          ) : null}
          <button type="button" className="button small" onClick={() => download(r)}>
            {t('action.download')}
          </button>
          {v ? (
            <button type="button" className="button small" disabled={busy !== null} onClick={() => restore(v)}>
              {t('trash.restore')}
            </button>
          ) : null}
        </div>
        {open ? (
          <section className="version-preview" aria-label={open.label}>
            {open.status === 'loading' ? <p className="muted">{t('common.loading')}</p> : open.status === 'error' ? <p className="error-text">{open.message}</p> : <pre>{open.text}</pre>}
            {open.status === 'ready' && open.truncated ? <p className="muted small">{t('share.textTruncated')}</p> : null}
          </section>
        ) : null}
      </li>
    );
  };

  return (
    <Dialog title={t('versions.title', { name })} onClose={onClose} wide>
      {state.status === 'loading' ? (
        <ListSkeleton label={t('versions.loading')} />
      ) : state.status === 'error' ? (
        <ListError title={t('versions.failed')} error={state.error} onRetry={reload} />
      ) : (
        <>
          <ul className="version-list" aria-label={t('versions.title', { name })}>
            {/* Only its figures: a listing's entry also carries the item's stable id, which names no version. */}
            {item({ size: current.size, modified: current.modified })}
            {state.items.map((v) => item(v, v))}
          </ul>
          {state.items.length === 0 ? <p className="muted">{t('versions.none')}</p> : null}
        </>
      )}
    </Dialog>
  );
}
