import { useState } from 'react';
import { messageOf } from '../api/errors';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';

/** Confirms ending a share link: whoever has it loses access at once, and it cannot be brought back. */
export function RevokeDialog({ name, onConfirm, onClose }: { name: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={`Revoke the link to “${name}”?`} onClose={onClose} describedBy="revoke-warning">
      <div className="stack">
        <p id="revoke-warning" className="warning-text">
          The link stops working at once for everyone who has it. This cannot be undone; you can make a new link later.
        </p>
        <p className="form-error" role="alert">
          {error}
        </p>
        <ConfirmActions label="Revoke link" busyLabel="Revoking…" onConfirm={onConfirm} onClose={onClose} onError={(e) => setError(messageOf(e))} />
      </div>
    </Dialog>
  );
}
