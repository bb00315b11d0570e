import { useState, type ReactNode } from 'react';
import { messageOf } from '../api/errors';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';

/** Asks before something that cannot be undone, says what will happen, and shows the server's refusal in place. */
export function ConfirmDialog({ title, warning, children, label, busyLabel, onConfirm, onClose }: { title: string; warning: ReactNode; children?: ReactNode; label: string; busyLabel: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={title} onClose={onClose} describedBy="confirm-warning">
      <div className="stack">
        <p id="confirm-warning" className="warning-text">
          {warning}
        </p>
        {children}
        <p className="form-error" role="alert">
          {error}
        </p>
        <ConfirmActions label={label} busyLabel={busyLabel} onConfirm={onConfirm} onClose={onClose} onError={(e) => setError(messageOf(e))} />
      </div>
    </Dialog>
  );
}
