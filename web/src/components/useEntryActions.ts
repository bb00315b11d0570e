import { useCallback } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { startDownloads } from './actions';
import type { DialogState } from './BrowserDialogs';
import type { MenuAction } from './RowMenu';
import { useNotify } from './Toasts';

/**
 * What the row menu, the selection bar and the keyboard can do to entries of
 * the folder: open, download, or open the dialog for the rest.
 */
export function useEntryActions(storage: StorageApi, segments: Segments, open: (entry: Entry) => void, setDialog: (d: DialogState) => void) {
  const notify = useNotify();

  const download = useCallback(
    (entries: Entry[]) => {
      const files = entries.filter((e) => e.is_file);
      if (files.length < entries.length) notify(files.length ? 'Folders are skipped: only files can be downloaded.' : 'Only files can be downloaded. Open the folder and select its files.', 'error');
      if (files.length) startDownloads(storage, segments, files).catch((e: unknown) => notify(messageOf(e), 'error'));
    },
    [storage, segments, notify],
  );

  const act = (action: MenuAction, entries: Entry[]) => {
    const one = entries.length === 1 ? entries[0] : undefined;
    if (entries.length === 0) return;
    switch (action) {
      case 'open':
        if (one) open(one);
        break;
      case 'download':
        download(entries);
        break;
      case 'share':
        if (one?.is_file) setDialog({ kind: 'share', path: [...segments, one.name] });
        break;
      case 'rename':
        if (one) setDialog({ kind: 'rename', entry: one });
        break;
      case 'move':
        setDialog({ kind: 'move', entries });
        break;
      case 'delete':
        setDialog({ kind: 'delete', entries });
        break;
    }
  };

  return { download, act };
}
