import { ApiError } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { stemLength } from '../lib/file-kind';
import { copyEntries, moveEntries, runAll } from './actions';
import { rememberMove } from '../lib/recent-moves';
import { DeleteDialog } from './DeleteDialog';
import { DetailsDialog } from './DetailsDialog';
import { MoveDialog } from './MoveDialog';
import { NameDialog } from './NameDialog';
import { PreviewDialog } from './PreviewDialog';
import { ShareDialog } from './ShareDialog';
import { ShortcutsDialog } from './ShortcutsDialog';
import { TextEditorDialog } from './TextEditorDialog';
import { VersionsDialog } from './VersionsDialog';
import { useNotify } from './Toasts';
import { useAccount } from './useAccount';
import { moveBack, restoreDeleted, undoAction, useUndoMove } from './undo';
import { t } from '../lib/i18n';

export type DialogState =
  | { kind: 'new-folder' }
  | { kind: 'rename'; entry: Entry }
  | { kind: 'move'; entries: Entry[] }
  | { kind: 'copy'; entries: Entry[] }
  | { kind: 'delete'; entries: Entry[] }
  | { kind: 'share'; path: string[]; isFile: boolean }
  | { kind: 'preview'; entry: Entry }
  | { kind: 'edit'; entry: Entry }
  | { kind: 'versions'; entry: Entry }
  | { kind: 'details'; entry: Entry }
  | { kind: 'shortcuts' };

type Props = {
  dialog: DialogState;
  setDialog: (d: DialogState | null) => void;
  storage: StorageApi;
  segments: Segments;
  /** Where the move picker's tree starts (a shared folder), [] for My files. */
  root?: Segments;
  sorted: readonly Entry[];
  /** Reload the folder, then focus and select `name` (or just the list). */
  afterChange: (name?: string) => void;
  download: (entries: Entry[]) => void;
  onFocusName: (name: string) => void;
};

/** The dialog open over the file manager, wired to the storage calls it makes. */
export function BrowserDialogs({ dialog, setDialog, storage, segments, root, sorted, afterChange, download, onFocusName }: Props) {
  const notify = useNotify();
  const { me } = useAccount();
  const trashOn = (me?.trash_days ?? 0) > 0;
  const versionsOn = me?.versions === true;
  const undoMove = useUndoMove(storage, segments, afterChange);
  const close = () => setDialog(null);
  const existing = (name: string) => sorted.some((e) => e.name === name);
  /** The picker's choice: moved or copied there, the toast saying so (with Undo for a move); an error stays in the dialog. */
  const place = async (verb: 'move' | 'copy', entries: Entry[], to: Segments) => {
    const r = await (verb === 'copy' ? copyEntries : moveEntries)(storage, segments, entries, to);
    afterChange();
    if (r.done && !root?.length) rememberMove(storage.user, to);
    if (r.error) throw new ApiError(0, `${verb}_failed`, r.error);
    if (r.toast) notify(r.toast, r.done < entries.length ? 'error' : 'info', verb === 'move' ? undoMove(r.names, to) : undefined);
  };
  return (
    <>
  {dialog?.kind === 'new-folder' ? (
    <NameDialog
      title={t('toolbar.newFolder')}
      label={t('dialog.folderName')}
      submitLabel={t('dialog.create')}
      initial=""
      taken={existing}
      onSubmit={async (name) => {
        await storage.createFolder([...segments, name]);
        afterChange(name);
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'rename' ? (
    <NameDialog
      title={t('dialog.renameTitle', { name: dialog.entry.name })}
      label={t('dialog.newName')}
      submitLabel={t('action.rename')}
      initial={dialog.entry.name}
      selectLength={stemLength(dialog.entry.name, dialog.entry.is_file)}
      taken={existing}
      onSubmit={async (name) => {
        const was = dialog.entry.name;
        await storage.move([...segments, was], [...segments, name]);
        afterChange(name);
        notify(t('toast.renamed', { name }), 'info', undoAction(notify, () => moveBack(storage, segments, segments, [{ now: name, was }]), () => afterChange(was)));
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'move' || dialog?.kind === 'copy' ? (
    <MoveDialog
      storage={storage}
      from={segments}
      root={root}
      entries={dialog.entries}
      copy={dialog.kind === 'copy'}
      onChoose={(to) => place(dialog.kind, dialog.entries, to)}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'delete' ? (
    <DeleteDialog
      entries={dialog.entries}
      onConfirm={async () => {
        const deleted: Segments[] = [];
        const { failed, message } = await runAll(dialog.entries, async (e) => {
          await storage.remove([...segments, e.name]);
          deleted.push([...segments, e.name]);
        });
        afterChange();
        if (failed.length) notify(t('toast.couldNotDelete', { names: failed.join(', '), message }), 'error');
        // Undo takes them back out of the trash: only when there is one, and only from one's own (a shared
        // folder's deletions go to its owner's trash).
        const undo = trashOn && !root?.length ? undoAction(notify, () => restoreDeleted(storage, deleted), () => afterChange()) : undefined;
        if (deleted.length) notify(dialog.entries.length === 1 ? t('toast.deletedOne', { name: dialog.entries[0]?.name ?? '' }) : t('toast.deletedMany', { count: deleted.length }), 'info', undo);
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'versions' ? (
    <VersionsDialog
      storage={storage}
      path={[...segments, dialog.entry.name]}
      // The file as the listing shows it now: after a restore, the reloaded listing has its new size and time.
      current={sorted.find((e) => e.name === dialog.entry.name) ?? dialog.entry}
      onRestored={() => afterChange(dialog.entry.name)}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'details' ? (
    <DetailsDialog storage={storage} folder={segments} entry={sorted.find((e) => e.name === dialog.entry.name) ?? dialog.entry} own={!root?.length} versionsOn={versionsOn} onClose={close} />
  ) : null}
  {dialog?.kind === 'share' ? <ShareDialog storage={storage} path={dialog.path} isFile={dialog.isFile} onClose={close} /> : null}
  {dialog?.kind === 'preview' ? (
    <PreviewDialog
      storage={storage}
      folder={segments}
      entry={dialog.entry}
      siblings={sorted.filter((e) => e.is_file)}
      onNavigate={(entry) => {
        onFocusName(entry.name);
        setDialog({ kind: 'preview', entry });
      }}
      onDownload={(entry) => download([entry])}
      onShare={(entry) => setDialog({ kind: 'share', path: [...segments, entry.name], isFile: true })}
      onEdit={(entry) => setDialog({ kind: 'edit', entry })}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'edit' ? <TextEditorDialog storage={storage} folder={segments} entry={dialog.entry} onSaved={(name) => afterChange(name)} onClose={close} /> : null}
  {dialog?.kind === 'shortcuts' ? <ShortcutsDialog onClose={close} /> : null}
    </>
  );
}
