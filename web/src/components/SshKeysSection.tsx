import { useCallback, useMemo, useState } from 'react';
import type { ApiClient } from '../api/client';
import { SshKeysApi, type SshKey } from '../api/ssh-keys';
import { formatDate, formatExactDate, plural } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { Dialog } from './Dialog';
import { FormActions } from './FormActions';
import { SettingsItem, SettingsListSection } from './SettingsListSection';
import { useNamedForm } from './useNamedForm';
import { useNotify } from './Toasts';
import { useRemoteList } from './useRemoteList';

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
      title="SSH keys"
      about="For SFTP: sftp, scp, sshfs, rclone and restic sign in with the private half of a key you add here."
      count={(n) => plural(n, 'SSH key')}
      loading="Loading SSH keys"
      what="Your SSH keys"
      empty={{ title: 'No SSH keys yet', text: 'Add the public key (the .pub file) of each computer that reaches your files over SFTP.' }}
      addLabel="Add SSH key"
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
                notify(`“${k.name}” can sign in to SFTP.`);
              }}
              onClose={() => setAdding(false)}
            />
          ) : null}
          {removing ? (
            <ConfirmDialog
              title={`Remove “${removing.name}”?`}
              warning="Its key signs in to SFTP no more, from the next connection on."
              label="Remove SSH key"
              busyLabel="Removing…"
              onConfirm={async () => {
                await api.remove(removing.id);
                drop((k) => k.id !== removing.id);
                notify(`“${removing.name}” was removed.`);
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
              { label: 'Fingerprint', value: <code className="ssh-fingerprint">{k.fingerprint}</code> },
              { label: 'Added', value: formatDate(k.created, now), title: formatExactDate(k.created) },
              { label: 'Last used', value: k.last_used ? formatDate(k.last_used, now) : 'Never', title: k.last_used ? formatExactDate(k.last_used) : undefined },
            ]}
            action={{ label: 'Remove', onClick: () => setRemoving(k) }}
          />
        ))
      }
    </SettingsListSection>
  );
}

/** A name and one line of a `.pub` file; the server says what is wrong with a key it refuses. */
function AddSshKeyDialog({ api, onAdded, onClose }: { api: SshKeysApi; onAdded: (k: SshKey) => void; onClose: () => void }) {
  const { name, setName, error, busy, nameRef, submit } = useNamedForm('Give it a name, so you know later which computer it is.');
  const [key, setKey] = useState('');
  return (
    <Dialog title="Add SSH key" onClose={onClose}>
      <form className="stack" onSubmit={submit(async (n) => onAdded(await api.add(n, key.trim())))} noValidate>
        <label className="field">
          <span>Name</span>
          <input ref={nameRef} name="ssh-key-name" autoFocus autoComplete="off" placeholder="e.g. Laptop, backup server" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="ssh-key-error" />
        </label>
        <label className="field">
          <span>Public key</span>
          <textarea name="ssh-key" className="ssh-key-text" rows={4} spellCheck={false} placeholder="ssh-ed25519 AAAA… you@laptop (the contents of ~/.ssh/id_ed25519.pub)" value={key} onChange={(e) => setKey(e.target.value)} aria-describedby="ssh-key-error" />
        </label>
        <FormActions errorId="ssh-key-error" error={error} busy={busy} label="Add SSH key" busyLabel="Adding…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
