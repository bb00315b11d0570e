import type { Entry } from '../api/storage';
import { plural } from '../lib/format';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';
import { useAccount } from './useAccount';

/** Confirms a delete and says plainly what it means: folders go with their contents, and whether the trash keeps them. */
export function DeleteDialog({ entries, onConfirm, onClose }: { entries: readonly Entry[]; onConfirm: () => Promise<void>; onClose: () => void }) {
  const folders = entries.filter((e) => !e.is_file).length;
  const trashDays = useAccount().me?.trash_days ?? 0;
  const only = entries.length === 1 ? entries[0] : undefined;
  const title = only ? `Delete “${only.name}”?` : `Delete ${plural(entries.length, 'item')}?`;
  return (
    <Dialog title={title} onClose={onClose} describedBy="delete-warning">
      <div className="stack">
        <p id="delete-warning" className="warning-text">
          {folders > 0
            ? only
              ? 'This folder and everything in it will be deleted. '
              : `${plural(folders, 'folder')} will be deleted with everything in them. `
            : ''}
          {trashDays > 0 ? `It goes to the trash, where it can be restored for ${plural(trashDays, 'day')}.` : 'There is no trash: this cannot be undone.'}
        </p>
        {!only ? (
          <ul className="delete-list">
            {entries.slice(0, 6).map((e) => (
              <li key={e.name}>{e.name}{e.is_file ? '' : '/'}</li>
            ))}
            {entries.length > 6 ? <li className="muted">and {plural(entries.length - 6, 'more item')}</li> : null}
          </ul>
        ) : null}
        <ConfirmActions label="Delete" busyLabel="Deleting…" onConfirm={onConfirm} onClose={onClose} />
      </div>
    </Dialog>
  );
}
