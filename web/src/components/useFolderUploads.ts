import { useCallback, useEffect, useMemo } from 'react';
import { messageOf } from '../api/errors';
import { isInside, type Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { coalesce } from '../lib/coalesce';
import { fromDrop, fromInput, type Picked } from '../lib/drop';
import { useNotify } from './Toasts';
import { useUploadConflicts } from './useUploadConflicts';
import { useUploads } from './useUploads';
import { t } from '../lib/i18n';

/**
 * Uploads into the folder on screen: the upload queue, fed by the file
 * pickers and by drops, and a refresh of the listing whenever an upload
 * lands in this folder or below it.
 */
export function useFolderUploads(storage: StorageApi, segments: Segments, reload: () => void) {
  const notify = useNotify();
  // A batch landing file after file refreshes the listing every 150 ms, not only once the last one is in.
  const refresh = useMemo(() => coalesce(reload, 150), [reload]);
  useEffect(() => () => refresh.cancel(), [refresh]);
  const onFolderChanged = useCallback(
    (folder: Segments) => {
      // An upload landed here or in a sub-folder (which may be new).
      if (isInside(folder, segments)) refresh.request();
    },
    [segments, refresh],
  );
  const uploads = useUploads(storage, onFolderChanged);
  const conflicts = useUploadConflicts(storage);

  /** A batch, once the user said what to do with its taken names (when listing fails, the server's suffixes keep both). */
  async function queue(picked: Picked) {
    const { picked: kept, replace } = await conflicts.resolve(picked, segments).catch(() => ({ picked, replace: new Set<File>() }));
    await uploads.add(kept, segments, replace);
  }

  /** Files chosen in a picker; the input is cleared so picking the same files again still fires. */
  async function pick(list: FileList | null, input: HTMLInputElement | null) {
    const picked = list && list.length ? fromInput(list) : undefined;
    if (input) input.value = '';
    if (picked) await queue(picked);
  }

  /** Files and folders dropped on the page. */
  function drop(data: DataTransfer) {
    fromDrop(data).then(
      (picked) => (picked.files.length || picked.emptyDirs.length ? queue(picked) : undefined),
      (err: unknown) => notify(t('drop.unreadable', { message: messageOf(err) }), 'error'),
    );
  }

  return { uploads, pick, drop, conflictDialog: conflicts.dialog };
}
