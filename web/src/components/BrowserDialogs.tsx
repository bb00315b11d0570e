import { ApiError } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { stemLength } from '../lib/file-kind';
import { plural } from '../lib/format';
import { copyEntries, moveEntries, runAll } from './actions';
import { rememberMove } from '../lib/recent-moves';
import { DeleteDialog } from './DeleteDialog';
import { MoveDialog } from './MoveDialog';
import { NameDialog } from './NameDialog';
import { PreviewDialog } from './PreviewDialog';
import { ShareDialog } from './ShareDialog';
import { ShortcutsDialog } from './ShortcutsDialog';
import { TextEditorDialog } from './TextEditorDialog';
import { VersionsDialog } from './VersionsDialog';
import { useNotify } from './Toasts';

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
  const close = () => setDialog(null);
  const existing = (name: string) => sorted.some((e) => e.name === name);
  return (
    <>
  {dialog?.kind === 'new-folder' ? (
    <NameDialog
      title="New folder"
      label="Folder name"
      submitLabel="Create"
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
      title={`Rename “${dialog.entry.name}”`}
      label="New name"
      submitLabel="Rename"
      initial={dialog.entry.name}
      selectLength={stemLength(dialog.entry.name, dialog.entry.is_file)}
      taken={existing}
      onSubmit={async (name) => {
        await storage.move([...segments, dialog.entry.name], [...segments, name]);
        afterChange(name);
        notify(`Renamed to “${name}”.`);
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'move' ? (
    <MoveDialog
      storage={storage}
      from={segments}
      root={root}
      entries={dialog.entries}
      onChoose={async (to) => {
        const r = await moveEntries(storage, segments, dialog.entries, to);
        afterChange();
        if (r.moved && !root?.length) rememberMove(storage.user, to);
        if (r.error) throw new ApiError(0, 'move_failed', r.error);
        if (r.toast) notify(r.toast, r.moved < dialog.entries.length ? 'error' : 'info');
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'copy' ? (
    <MoveDialog
      storage={storage}
      from={segments}
      root={root}
      entries={dialog.entries}
      copy
      onChoose={async (to) => {
        const r = await copyEntries(storage, segments, dialog.entries, to);
        afterChange();
        if (r.copied && !root?.length) rememberMove(storage.user, to);
        if (r.error) throw new ApiError(0, 'copy_failed', r.error);
        if (r.toast) notify(r.toast, r.copied < dialog.entries.length ? 'error' : 'info');
      }}
      onClose={close}
    />
  ) : null}
  {dialog?.kind === 'delete' ? (
    <DeleteDialog
      entries={dialog.entries}
      onConfirm={async () => {
        const { failed, message } = await runAll(dialog.entries, (e) => storage.remove([...segments, e.name]));
        afterChange();
        const n = dialog.entries.length - failed.length;
        if (failed.length) notify(`Could not delete ${failed.join(', ')}. ${message}`, 'error');
        if (n) notify(`Deleted ${dialog.entries.length === 1 ? `“${dialog.entries[0]?.name}”` : plural(n, 'item')}.`);
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
