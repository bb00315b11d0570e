import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { TrashApi } from '../api/trash';
import { useCallback } from 'react';
import { runAll } from './actions';
import { useNotify, type ToastAction } from './Toasts';
import { t } from '../lib/i18n';

type Say = (text: string, kind?: 'info' | 'error') => void;

/**
 * The Undo of a toast: runs `undo`, says what came of it (its sentence, or
 * the error in words) and then `after` (reload the folder). An undo is the
 * reverse operation, done afresh: a name taken meanwhile is refused, never
 * replaced.
 */
export function undoAction(say: Say, undo: () => Promise<string>, after: () => void): ToastAction {
  return {
    label: t('toast.undo'),
    run: () =>
      void undo()
        .then((text) => say(text), (e: unknown) => say(messageOf(e), 'error'))
        .finally(after),
  };
}

/** Moves `names` back from `to` into `from` (the undo of a move or, for one name, of a rename). */
export async function moveBack(storage: StorageApi, from: Segments, to: Segments, names: readonly { now: string; was: string }[]): Promise<string> {
  const { failed, message } = await runAll(
    names.map((n) => ({ name: n.now, was: n.was })),
    (n) => storage.move([...to, n.name], [...from, n.was]),
  );
  if (failed.length) throw new ApiError(0, 'undo_failed', t('toast.undoFailed', { names: failed.join(', '), message }));
  const one = names.length === 1 ? names[0] : undefined;
  if (one && one.now !== one.was) return t('toast.nameBack', { name: one.was });
  const where = from.at(-1) ?? t('nav.myFiles');
  return one ? t('toast.backOne', { name: one.was, where }) : t('toast.backMany', { count: names.length, where });
}

/**
 * Takes items just deleted back out of the owner's trash (--trash-days): for
 * each path, its newest trash item (what was deleted from there last).
 */
export async function restoreDeleted(storage: StorageApi, paths: readonly Segments[]): Promise<string> {
  const trash = new TrashApi(storage.client);
  const items = await trash.list();
  const newest = (path: string) =>
    items.filter((i) => i.path === path).sort((a, b) => Date.parse(b.deleted_at) - Date.parse(a.deleted_at))[0];
  const { failed, message } = await runAll(
    paths.map((p) => ({ name: p.at(-1) ?? '', path: `/${storage.user}/${p.join('/')}` })),
    async (p) => {
      const item = newest(p.path);
      if (!item) throw new ApiError(404, 'not_found', t('toast.notInTrash'));
      await trash.restore(item.id);
    },
  );
  if (failed.length) throw new ApiError(0, 'undo_failed', t('toast.restoreFailed', { names: failed.join(', '), message }));
  return paths.length === 1 ? t('toast.restoredOne', { name: paths[0]?.at(-1) ?? '' }) : t('toast.restoredMany', { count: paths.length });
}

/**
 * The Undo of a move out of `from` (the Move dialog's, a drag's): `names` go
 * back from `to`, then `after` reloads. Nothing to undo when none moved.
 */
export function useUndoMove(storage: StorageApi, from: Segments, after: () => void): (names: readonly string[], to: Segments) => ToastAction | undefined {
  const say = useNotify();
  return useCallback(
    (names, to) => (names.length ? undoAction(say, () => moveBack(storage, from, to, names.map((n) => ({ now: n, was: n }))), after) : undefined),
    [say, storage, from, after],
  );
}
