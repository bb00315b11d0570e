import { useState } from 'react';
import { messageOf } from '../api/errors';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';
import { t } from '../lib/i18n';

/** Confirms ending a share link: whoever has it loses access at once, and it cannot be brought back. */
export function RevokeDialog({ name, onConfirm, onClose }: { name: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={t('revoke.title', { name })} onClose={onClose} describedBy="revoke-warning">
      <div className="stack">
        <p id="revoke-warning" className="warning-text">
          {t('revoke.warning')}
        </p>
        <p className="form-error" role="alert">
          {error}
        </p>
        <ConfirmActions label={t('revoke.label')} busyLabel={t('keys.revoking')} onConfirm={onConfirm} onClose={onClose} onError={(e) => setError(messageOf(e))} />
      </div>
    </Dialog>
  );
}
