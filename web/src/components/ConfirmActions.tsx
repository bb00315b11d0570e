import { useEffect, useRef, useState } from 'react';
import { t } from '../lib/i18n';

/**
 * Cancel and a dangerous confirm button, for dialogs that ask before something
 * that cannot be undone. Cancel has the focus, so Enter never destroys by
 * accident. On success the dialog closes; on failure it shows the error
 * through `onError` and stays, or closes when there is none (the caller
 * reports it elsewhere).
 */
export function ConfirmActions({
  label,
  busyLabel,
  onConfirm,
  onClose,
  onError,
}: {
  label: string;
  busyLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  onError?: (e: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  return (
    <div className="dialog-actions">
      <button ref={cancelRef} type="button" className="button" onClick={onClose}>
        {t('dialog.cancel')}
      </button>
      <button
        type="button"
        className="button danger"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          onConfirm().then(onClose, (e: unknown) => {
            if (!onError) return onClose();
            onError(e);
            setBusy(false);
          });
        }}
      >
        {busy ? busyLabel : label}
      </button>
    </div>
  );
}
