import { useRef, useState, type FormEvent } from 'react';
import type { AdminUsersApi, User } from '../api/admin-users';
import { ApiError, messageOf } from '../api/errors';
import { generatePassword, newPasswordProblem, parseQuota, quotaText, usernameProblem } from '../lib/account-rules';
import { formatSize } from '../lib/format';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { PasswordField } from './PasswordField';

function FormError({ id, text }: { id: string; text: string | null }) {
  return (
    <p id={id} className="form-error" role="alert">
      {text ? (
        <>
          <Icon name="alert" size={18} />
          <span>{text}</span>
        </>
      ) : null}
    </p>
  );
}

/** A password typed twice, or generated (then shown, to hand over). */
function NewPassword({ value, confirm, onChange, onConfirm, invalid }: { value: string; confirm: string; onChange: (v: string) => void; onConfirm: (v: string) => void; invalid: boolean }) {
  const [generated, setGenerated] = useState<string | null>(null);
  return (
    <>
      <PasswordField label="Password" name="new-password" autoComplete="new-password" value={value} onChange={(v) => { setGenerated(null); onChange(v); }} invalid={invalid} />
      {generated === null ? (
        <PasswordField label="Password again" name="confirm-password" autoComplete="new-password" value={confirm} onChange={onConfirm} invalid={invalid} />
      ) : (
        <p className="muted small generated-note">Generated: <code className="generated-password">{generated}</code> — pass it on safely; it is not shown again.</p>
      )}
      <div>
        <button
          type="button"
          className="button small"
          onClick={() => {
            const p = generatePassword();
            setGenerated(p);
            onChange(p);
            onConfirm(p);
          }}
        >
          <Icon name="key" size={16} /> Generate a password
        </button>
      </div>
    </>
  );
}

const quotaHint = 'Like 10G, 500M or 1.5T (powers of 1024). Empty for no quota.';

/** A new account: username, password (typed or generated), administrator or not, an optional quota. */
export function CreateUserDialog({ api, taken, onCreated, onClose }: { api: AdminUsersApi; taken: (name: string) => boolean; onCreated: (name: string) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [admin, setAdmin] = useState(false);
  const [quota, setQuota] = useState('');
  const [error, setError] = useState<{ text: string; field: 'name' | 'password' | 'quota' | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const nameRef = useRef<HTMLInputElement>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const n = name.trim();
    const nameError = usernameProblem(n) ?? (taken(n) ? `A user named “${n}” already exists.` : null);
    if (nameError) {
      setError({ text: nameError, field: 'name' });
      return nameRef.current?.focus();
    }
    const pwError = newPasswordProblem(password, confirm);
    if (pwError) return setError({ text: pwError, field: 'password' });
    const bytes = parseQuota(quota);
    if (bytes === undefined) return setError({ text: `“${quota}” is not a size. ${quotaHint}`, field: 'quota' });
    setBusy(true);
    setError(null);
    try {
      await api.create({ username: n, password, admin });
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.status === 409) return setError({ text: `A user named “${n}” already exists.`, field: 'name' });
      return setError({ text: messageOf(err), field: err instanceof ApiError && err.status === 400 ? 'name' : null });
    }
    // The quota is set on the new account; should that fail, the account exists and the list says so.
    if (bytes !== null) {
      try {
        await api.update(n, { quota: bytes });
      } catch (err) {
        onCreated(n);
        setBusy(false);
        return setError({ text: `“${n}” was created, but the quota was not set: ${messageOf(err)}`, field: 'quota' });
      }
    }
    onCreated(n);
    onClose();
  }

  return (
    <Dialog title="New user" onClose={onClose}>
      <form className="stack" onSubmit={submit} noValidate>
        <label className="field">
          <span>Username</span>
          <input ref={nameRef} name="new-username" autoFocus autoComplete="off" autoCapitalize="none" spellCheck={false} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={error?.field === 'name' ? true : undefined} aria-describedby="create-user-error" />
        </label>
        <NewPassword value={password} confirm={confirm} onChange={setPassword} onConfirm={setConfirm} invalid={error?.field === 'password'} />
        <label className="field">
          <span>Quota (optional)</span>
          <input name="quota" autoComplete="off" spellCheck={false} placeholder="e.g. 10G" value={quota} onChange={(e) => setQuota(e.target.value)} aria-invalid={error?.field === 'quota' ? true : undefined} aria-describedby="create-quota-hint" />
          <span id="create-quota-hint" className="muted small field-hint">
            {quotaHint}
          </span>
        </label>
        <label className="check-field">
          <input type="checkbox" name="admin" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          <span>
            Administrator
            <span className="muted small block-line">Can manage users, including other administrators.</span>
          </span>
        </label>
        <FormError id="create-user-error" text={error?.text ?? null} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create user'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A new password for someone else: they are signed out everywhere. */
export function ResetPasswordDialog({ api, user, onDone, onClose }: { api: AdminUsersApi; user: User; onDone: () => void; onClose: () => void }) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const problem = newPasswordProblem(password, confirm);
    if (problem) return setError(problem);
    setBusy(true);
    setError(null);
    try {
      await api.update(user.username, { password });
      onDone();
      onClose();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title={`Reset the password of “${user.username}”`} onClose={onClose} describedBy="reset-warning">
      <form className="stack" onSubmit={submit} noValidate>
        <p id="reset-warning" className="warning-text">
          {user.username} is signed out everywhere and their download links made with path tokens stop working. Their app passwords keep working.
        </p>
        <NewPassword value={password} confirm={confirm} onChange={setPassword} onConfirm={setConfirm} invalid={!!error} />
        <FormError id="reset-error" text={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Saving…' : 'Set password'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** How much a user may store; empty for no limit. */
export function QuotaDialog({ api, user, onDone, onClose }: { api: AdminUsersApi; user: User; onDone: (quota: number | null) => void; onClose: () => void }) {
  const [text, setText] = useState(quotaText(user.quota));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const parsed = parseQuota(text);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    if (parsed === undefined) return setError(`“${text}” is not a size. ${quotaHint}`);
    setBusy(true);
    setError(null);
    try {
      await api.update(user.username, { quota: parsed });
      onDone(parsed);
      onClose();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title={`Quota of “${user.username}”`} onClose={onClose}>
      <form className="stack" onSubmit={submit} noValidate>
        <p className="muted">
          {user.username} stores {formatSize(user.used)} now. Uploads that would go over the quota are refused; nothing already stored is removed.
        </p>
        <label className="field">
          <span>Quota</span>
          <input name="quota" autoFocus autoComplete="off" spellCheck={false} placeholder="No quota" value={text} onChange={(e) => setText(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby="quota-hint" />
          <span id="quota-hint" className="muted small field-hint">
            {parsed === undefined ? quotaHint : parsed === null ? 'No quota: as much as the server has room for.' : `${formatSize(parsed)}${parsed < user.used ? ' — less than is stored now: further uploads are refused.' : ''}`}
          </span>
        </label>
        <FormError id="quota-error" text={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Saving…' : 'Set quota'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Removing an account, keeping its files on the server or deleting them too; the dialog says which. */
export function RemoveUserDialog({ api, user, onDone, onClose }: { api: AdminUsersApi; user: User; onDone: (deletedFiles: boolean) => void; onClose: () => void }) {
  const [deleteFiles, setDeleteFiles] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={`Remove “${user.username}”?`} onClose={onClose} describedBy="remove-warning">
      <div className="stack">
        <fieldset className="choice-group">
          <legend>Their files ({formatSize(user.used)})</legend>
          <label className="check-field">
            <input type="radio" name="files" checked={!deleteFiles} onChange={() => setDeleteFiles(false)} />
            <span>Keep them on the server</span>
          </label>
          <label className="check-field">
            <input type="radio" name="files" checked={deleteFiles} onChange={() => setDeleteFiles(true)} />
            <span>Delete them too</span>
          </label>
        </fieldset>
        <p id="remove-warning" className="warning-text">
          {deleteFiles
            ? `${user.username} is signed out at once, their app passwords and share links stop working, and all their files are deleted. This cannot be undone.`
            : `${user.username} is signed out at once and their app passwords and share links stop working. Their files stay in the server's storage, where an operator can reach them.`}
        </p>
        <p className="form-error" role="alert">
          {error}
        </p>
        <ConfirmActions
          label={deleteFiles ? 'Remove user and delete files' : 'Remove user, keep files'}
          busyLabel="Removing…"
          onConfirm={async () => {
            await api.remove(user.username, deleteFiles);
            onDone(deleteFiles);
          }}
          onClose={onClose}
          onError={(e) => setError(messageOf(e))}
        />
      </div>
    </Dialog>
  );
}
