import { useEffect, useRef, useState } from 'react';
import type { ConflictChoice, TakenName } from '../lib/upload-conflicts';
import { Dialog } from './Dialog';
import { t } from '../lib/i18n';

type Props = {
  taken: TakenName;
  /** The folder it goes to, as the user names it. */
  folderName: string;
  /** How many taken names are still to be asked about after this one. */
  others: number;
  /** The server keeps versions: a Replace loses nothing. */
  versions: boolean;
  onAnswer: (choice: ConflictChoice, all: boolean) => void;
  /** Closed without an answer: the taken names are left alone. */
  onClose: () => void;
};

/** Asks what to do with one upload whose name is taken, and whether the same goes for the others. */
export function UploadConflictDialog({ taken, folderName, others, versions, onAnswer, onClose }: Props) {
  const [all, setAll] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  // Keep both loses nothing: it has the focus, so Enter never replaces by accident.
  useEffect(() => keep.current?.focus(), [taken]);
  return (
    <Dialog title={t('conflict.title', { name: taken.name })} onClose={onClose} className="upload-conflict">
      <p>
        {t('conflict.text', { name: taken.name, folder: folderName })}
      </p>
      <p className="muted">{versions ? t('conflict.versions') : t('conflict.noVersions')}</p>
      {others > 0 ? (
        <label className="check-field">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
          <span>
            {t('conflict.all', { count: others })}
          </span>
        </label>
      ) : null}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={() => onAnswer('skip', all)}>
          {t('conflict.skip')}
        </button>
        <button ref={keep} type="button" className="button" onClick={() => onAnswer('keep', all)}>
          {t('conflict.keep')}
        </button>
        <button type="button" className="button primary" onClick={() => onAnswer('replace', all)}>
          {t('conflict.replace')}
        </button>
      </div>
    </Dialog>
  );
}
