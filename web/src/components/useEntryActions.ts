import { useCallback } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { startDownloads, startZipDownload } from './actions';
import type { DialogState } from './BrowserDialogs';
import type { MenuAction } from './RowMenu';
import { useNotify } from './Toasts';
import { t } from '../lib/i18n';

/**
 * What the row menu, the selection bar and the keyboard can do to entries of
 * the folder: open, download, or open the dialog for the rest.
 */
export function useEntryActions(storage: StorageApi, segments: Segments, open: (entry: Entry) => void, setDialog: (d: DialogState) => void) {
  const notify = useNotify();

  const download = useCallback(
    (entries: Entry[]) => {
      const files = entries.filter((e) => e.is_file);
      if (files.length < entries.length) notify(files.length ? t('toast.foldersSkipped') : t('toast.folderZip'), 'error');
      if (files.length) startDownloads(storage, segments, files).catch((e: unknown) => notify(messageOf(e), 'error'));
    },
    [storage, segments, notify],
  );

  /** One folder → its zip; several entries → a zip of just those entries of this folder. */
  const zip = (entries: Entry[]) => {
    const folder = entries.length === 1 && entries[0] && !entries[0].is_file ? [...segments, entries[0].name] : undefined;
    const started = folder ? startZipDownload(storage, folder) : startZipDownload(storage, segments, entries.map((e) => e.name));
    started.then(
      () => notify(t('toast.zipStarted')),
      (e: unknown) => notify(messageOf(e), 'error'),
    );
  };

  const act = (action: MenuAction, entries: Entry[]) => {
    const one = entries.length === 1 ? entries[0] : undefined;
    if (entries.length === 0) return;
    switch (action) {
      case 'open':
        if (one) open(one);
        break;
      case 'edit':
        if (one) setDialog({ kind: 'edit', entry: one });
        break;
      case 'download':
        download(entries);
        break;
      case 'zip':
        zip(entries);
        break;
      case 'details':
        if (one) setDialog({ kind: 'details', entry: one });
        break;
      case 'versions':
        if (one) setDialog({ kind: 'versions', entry: one });
        break;
      case 'share':
        if (one) setDialog({ kind: 'share', path: [...segments, one.name], isFile: one.is_file });
        break;
      case 'rename':
        if (one) setDialog({ kind: 'rename', entry: one });
        break;
      case 'move':
        setDialog({ kind: 'move', entries });
        break;
      case 'copy':
        setDialog({ kind: 'copy', entries });
        break;
      case 'delete':
        setDialog({ kind: 'delete', entries });
        break;
    }
  };

  return { download, act };
}
