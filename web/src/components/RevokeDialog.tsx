import { useEffect, useRef, useState } from 'react';
import { messageOf } from '../api/errors';
import { Dialog } from './Dialog';

/** Confirms ending a share link: whoever has it loses access at once, and it cannot be brought back. */
export function RevokeDialog({ name, onConfirm, onClose }: { name: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  return (
    <Dialog title={`Revoke the link to “${name}”?`} onClose={onClose} describedBy="revoke-warning">
      <div className="stack">
        <p id="revoke-warning" className="warning-text">
          The link stops working at once for everyone who has it. This cannot be undone; you can make a new link later.
        </p>
        <p className="form-error" role="alert">
          {error}
        </p>
        <div className="dialog-actions">
          <button ref={cancelRef} type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="button danger"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              onConfirm().then(onClose, (e: unknown) => {
                setError(messageOf(e));
                setBusy(false);
              });
            }}
          >
            {busy ? 'Revoking…' : 'Revoke link'}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
