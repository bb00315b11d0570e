import { useCallback, useMemo, useState } from 'react';
import type { ApiClient } from '../api/client';
import { SshKeysApi, type SshKey } from '../api/ssh-keys';
import { formatDate, formatExactDate } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Dialog } from './Dialog';
import { FormActions } from './FormActions';
import { SettingsItem, SettingsListSection } from './SettingsListSection';
import { useNamedForm } from './useNamedForm';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';
import { t } from '../lib/i18n';

/** SSH keys for SFTP (sftp, scp, sshfs, rclone, restic): add a `.pub` line with a name, see each fingerprint, remove one. */
export function SshKeysSection({ client }: { client: ApiClient }) {
  const api = useMemo(() => new SshKeysApi(client), [client]);
  const load = useCallback((signal: AbortSignal) => api.list(signal), [api]);
  const { state, reload, drop } = useRemoteList(load);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<SshKey | null>(null);
  const notify = useNotify();
  const [now] = useState(() => new Date());

  return (
    <SettingsListSection
      id="ssh-keys"
      icon="lock"
      title={t('ssh.title')}
      about={t('ssh.about')}
      count={(count) => t('ssh.count', { count })}
      loading={t('ssh.loading')}
      failed={t('ssh.failed')}
      empty={{ title: t('ssh.none'), text: t('ssh.noneText') }}
      addLabel={t('ssh.add')}
      onAdd={() => setAdding(true)}
      list={state}
      onRetry={reload}
      dialogs={
        <>
          {adding ? (
            <AddSshKeyDialog
              api={api}
              onAdded={(k) => {
                setAdding(false);
                reload();
                notify(t('ssh.added', { name: k.name }));
              }}
              onClose={() => setAdding(false)}
            />
          ) : null}
          {removing ? (
            <ConfirmDialog
              title={t('ssh.removeTitle', { name: removing.name })}
              warning={t('ssh.removeWarning')}
              label={t('ssh.remove')}
              busyLabel={t('ssh.removing')}
              onConfirm={async () => {
                await api.remove(removing.id);
                drop((k) => k.id !== removing.id);
                notify(t('ssh.removed', { name: removing.name }));
              }}
              onClose={() => setRemoving(null)}
            />
          ) : null}
        </>
      }
    >
      {(items) =>
        items.map((k) => (
          <SettingsItem
            key={k.id}
            id={k.id}
            name={k.name}
            badges={<span className="badge">{k.algorithm}</span>}
            facts={[
              { label: t('ssh.fingerprint'), value: <code className="ssh-fingerprint">{k.fingerprint}</code> },
              { label: t('ssh.addedOn'), value: formatDate(k.created, now), title: formatExactDate(k.created) },
              { label: t('ssh.lastUsed'), value: k.last_used ? formatDate(k.last_used, now) : t('rules.expiryNever'), title: k.last_used ? formatExactDate(k.last_used) : undefined },
            ]}
            action={{ label: t('ssh.removeShort'), onClick: () => setRemoving(k) }}
          />
        ))
      }
    </SettingsListSection>
  );
}

/** A name and one line of a `.pub` file; the server says what is wrong with a key it refuses. */
function AddSshKeyDialog({ api, onAdded, onClose }: { api: SshKeysApi; onAdded: (k: SshKey) => void; onClose: () => void }) {
  const { name, setName, error, busy, nameRef, submit } = useNamedForm(t('ssh.nameMissing'));
  const [key, setKey] = useState('');
  return (
    <Dialog title={t('ssh.add')} onClose={onClose}>
      <form className="stack" onSubmit={submit(async (n) => onAdded(await api.add(n, key.trim())))} noValidate>
        <label className="field">
          <span>{t('appKey.name')}</span>
          <input ref={nameRef} name="ssh-key-name" autoFocus autoComplete="off" placeholder={t('ssh.namePlaceholder')} maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="ssh-key-error" />
        </label>
        <label className="field">
          <span>{t('ssh.publicKey')}</span>
          <textarea name="ssh-key" className="ssh-key-text" rows={4} spellCheck={false} placeholder={t('ssh.keyPlaceholder')} value={key} onChange={(e) => setKey(e.target.value)} aria-describedby="ssh-key-error" />
        </label>
        <FormActions errorId="ssh-key-error" error={error} busy={busy} label={t('ssh.add')} busyLabel={t('ssh.adding')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
