import { useCallback, useMemo, useState } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { VersionsApi, type FileVersion } from '../api/trash';
import { formatDate, formatExactDate, formatSize } from '../lib/format';
import { saveAs } from './actions';
import { Dialog } from './Dialog';
import { ListError, ListSkeleton } from './SectionStates';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';

/** A file's earlier contents (--versions): download one, or restore it (what the file holds now becomes a version). */
export function VersionsDialog({ storage, path, onRestored, onClose }: { storage: StorageApi; path: Segments; onRestored: () => void; onClose: () => void }) {
  const api = useMemo(() => new VersionsApi(storage), [storage]);
  const load = useCallback((signal: AbortSignal) => api.list(path, signal), [api, path]);
  const { state, reload } = useRemoteList(load);
  const notify = useNotify();
  const [busy, setBusy] = useState<string | null>(null);
  const name = path.at(-1) ?? '';

  const download = (v: FileVersion) => {
    api.downloadUrl(path, v.id).then((url) => saveAs(url, name), (e: unknown) => notify(messageOf(e), 'error'));
  };
  const restore = (v: FileVersion) => {
    setBusy(v.id);
    api.restore(path, v.id).then(
      () => {
        notify(`${name} has the content of ${formatExactDate(v.modified)} again.`);
        onRestored();
        reload();
      },
      (e: unknown) => notify(messageOf(e), 'error'),
    ).finally(() => setBusy(null));
  };

  return (
    <Dialog title={`Versions of ${name}`} onClose={onClose}>
      {state.status === 'loading' ? (
        <ListSkeleton label="Loading the versions" />
      ) : state.status === 'error' ? (
        <ListError what="the versions" error={state.error} onRetry={reload} />
      ) : state.items.length === 0 ? (
        <p className="muted">No earlier versions: a version is kept each time the file is replaced.</p>
      ) : (
        <ul className="version-list" aria-label={`Versions of ${name}`}>
          {state.items.map((v) => (
            <li key={v.id} className="version-item" data-version={v.id}>
              <span>
                <time dateTime={v.modified} title={formatExactDate(v.modified)}>{formatDate(v.modified)}</time> · {formatSize(v.size)}
              </span>
              <span className="spacer" />
              <button type="button" className="button small ghost" onClick={() => download(v)}>
                Download
              </button>
              <button type="button" className="button small" disabled={busy !== null} onClick={() => restore(v)}>
                Restore
              </button>
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}
