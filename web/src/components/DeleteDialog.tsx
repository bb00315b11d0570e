import type { Entry } from '../api/storage';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';

/** Confirms a delete and says plainly what it means: folders go with their contents, and whether the trash keeps them. */
export function DeleteDialog({ entries, onConfirm, onClose }: { entries: readonly Entry[]; onConfirm: () => Promise<void>; onClose: () => void }) {
  const folders = entries.filter((e) => !e.is_file).length;
  const trashDays = useAccount().me?.trash_days ?? 0;
  const only = entries.length === 1 ? entries[0] : undefined;
  const title = only ? t('delete.titleOne', { name: only.name }) : t('delete.titleMany', { count: entries.length });
  return (
    <Dialog title={title} onClose={onClose} describedBy="delete-warning">
      <div className="stack">
        <p id="delete-warning" className="warning-text">
          {folders > 0
            ? only
              ? `${t('delete.folderOne')} `
              : `${t('delete.folders', { count: folders })} `
            : ''}
          {trashDays > 0 ? t('delete.toTrash', { days: trashDays }) : t('delete.noTrash')}
        </p>
        {!only ? (
          <ul className="delete-list">
            {entries.slice(0, 6).map((e) => (
              <li key={e.name}>{e.name}{e.is_file ? '' : '/'}</li>
            ))}
            {entries.length > 6 ? <li className="muted">{t('delete.andMore', { count: entries.length - 6 })}</li> : null}
          </ul>
        ) : null}
        <ConfirmActions label={t('action.delete')} busyLabel={t('delete.busy')} onConfirm={onConfirm} onClose={onClose} />
      </div>
    </Dialog>
  );
}
