import { t } from '../lib/i18n';
/**
 * The end of a dialog's form: its error (announced), then Cancel and the
 * submit button, which says what it is doing while busy.
 */
export function FormActions({ errorId, error, busy, label, busyLabel, danger, onCancel }: { errorId: string; error: string | null; busy: boolean; label: string; busyLabel: string; danger?: boolean; onCancel: () => void }) {
  return (
    <>
      <p id={errorId} className="form-error" role="alert">
        {error}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          {t('dialog.cancel')}
        </button>
        <button type="submit" className={`button ${danger ? 'danger' : 'primary'}`} disabled={busy}>
          {busy ? busyLabel : label}
        </button>
      </div>
    </>
  );
}
