import { useRef, useState, type FormEvent } from 'react';
import type { AdminUsersApi, User } from '../api/admin-users';
import { ApiError, messageOf } from '../api/errors';
import { generatePassword, newPasswordProblem, parseQuota, quotaText, usernameProblem } from '../lib/account-rules';
import { formatSize } from '../lib/format';
import { ConfirmActions } from './ConfirmActions';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { PasswordField } from './PasswordField';
import { t } from '../lib/i18n';

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
      <PasswordField label={t('share.password')} name="new-password" autoComplete="new-password" value={value} onChange={(v) => { setGenerated(null); onChange(v); }} invalid={invalid} />
      {generated === null ? (
        <PasswordField label={t('userDialog.passwordAgain')} name="confirm-password" autoComplete="new-password" value={confirm} onChange={onConfirm} invalid={invalid} />
      ) : (
        <p className="muted small generated-note">
          {t('userDialog.generated')} <code className="generated-password">{generated}</code> — {t('userDialog.generatedNote')}
        </p>
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
          <Icon name="key" size={16} /> {t('userDialog.generate')}
        </button>
      </div>
    </>
  );
}

const quotaHint = () => t('userDialog.quotaHint');
const notASize = (text: string) => `${t('userDialog.notASize', { text })} ${quotaHint()}`;

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
    const nameError = usernameProblem(n) ?? (taken(n) ? t('userDialog.exists', { name: n }) : null);
    if (nameError) {
      setError({ text: nameError, field: 'name' });
      return nameRef.current?.focus();
    }
    const pwError = newPasswordProblem(password, confirm);
    if (pwError) return setError({ text: pwError, field: 'password' });
    const bytes = parseQuota(quota);
    if (bytes === undefined) return setError({ text: notASize(quota), field: 'quota' });
    setBusy(true);
    setError(null);
    try {
      await api.create({ username: n, password, admin });
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.status === 409) return setError({ text: t('userDialog.exists', { name: n }), field: 'name' });
      return setError({ text: messageOf(err), field: err instanceof ApiError && err.status === 400 ? 'name' : null });
    }
    // The quota is set on the new account; should that fail, the account exists and the list says so.
    if (bytes !== null) {
      try {
        await api.update(n, { quota: bytes });
      } catch (err) {
        onCreated(n);
        setBusy(false);
        return setError({ text: t('userDialog.quotaNotSet', { name: n, message: messageOf(err) }), field: 'quota' });
      }
    }
    onCreated(n);
    onClose();
  }

  return (
    <Dialog title={t('users.new')} onClose={onClose}>
      <form className="stack" onSubmit={submit} noValidate>
        <label className="field">
          <span>{t('login.username')}</span>
          <input ref={nameRef} name="new-username" autoFocus autoComplete="off" autoCapitalize="none" spellCheck={false} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={error?.field === 'name' ? true : undefined} aria-describedby="create-user-error" />
        </label>
        <NewPassword value={password} confirm={confirm} onChange={setPassword} onConfirm={setConfirm} invalid={error?.field === 'password'} />
        <label className="field">
          <span>{t('userDialog.quotaOptional')}</span>
          <input name="quota" autoComplete="off" spellCheck={false} placeholder={t('userDialog.quotaPlaceholder')} value={quota} onChange={(e) => setQuota(e.target.value)} aria-invalid={error?.field === 'quota' ? true : undefined} aria-describedby="create-quota-hint" />
          <span id="create-quota-hint" className="muted small field-hint">
            {quotaHint()}
          </span>
        </label>
        <label className="check-field">
          <input type="checkbox" name="admin" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          <span>
            {t('userDialog.administrator')}
            <span className="muted small block-line">{t('userDialog.administratorHelp')}</span>
          </span>
        </label>
        <FormError id="create-user-error" text={error?.text ?? null} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            {t('dialog.cancel')}
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? t('appKey.creating') : t('userDialog.create')}
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
    <Dialog title={t('userDialog.resetTitle', { name: user.username })} onClose={onClose} describedBy="reset-warning">
      <form className="stack" onSubmit={submit} noValidate>
        <p id="reset-warning" className="warning-text">
          {t('userDialog.resetWarning', { name: user.username })}
        </p>
        <NewPassword value={password} confirm={confirm} onChange={setPassword} onConfirm={setConfirm} invalid={!!error} />
        <FormError id="reset-error" text={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            {t('dialog.cancel')}
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? t('editor.saving') : t('userDialog.setPassword')}
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
    if (parsed === undefined) return setError(notASize(text));
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
    <Dialog title={t('userDialog.quotaTitle', { name: user.username })} onClose={onClose}>
      <form className="stack" onSubmit={submit} noValidate>
        <p className="muted">
          {t('userDialog.quotaNow', { name: user.username, used: formatSize(user.used) })}
        </p>
        <label className="field">
          <span>{t('userDialog.quota')}</span>
          <input name="quota" autoFocus autoComplete="off" spellCheck={false} placeholder={t('userDialog.noQuota')} value={text} onChange={(e) => setText(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby="quota-hint" />
          <span id="quota-hint" className="muted small field-hint">
            {parsed === undefined ? quotaHint() : parsed === null ? t('userDialog.noQuotaHint') : parsed < user.used ? t('userDialog.quotaBelowUse', { size: formatSize(parsed) }) : formatSize(parsed)}
          </span>
        </label>
        <FormError id="quota-error" text={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            {t('dialog.cancel')}
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? t('editor.saving') : t('userDialog.setQuota')}
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
    <Dialog title={t('ssh.removeTitle', { name: user.username })} onClose={onClose} describedBy="remove-warning">
      <div className="stack">
        <fieldset className="choice-group">
          <legend>{t('userDialog.theirFiles', { size: formatSize(user.used) })}</legend>
          <label className="check-field">
            <input type="radio" name="files" checked={!deleteFiles} onChange={() => setDeleteFiles(false)} />
            <span>{t('userDialog.keepFiles')}</span>
          </label>
          <label className="check-field">
            <input type="radio" name="files" checked={deleteFiles} onChange={() => setDeleteFiles(true)} />
            <span>{t('userDialog.deleteFiles')}</span>
          </label>
        </fieldset>
        <p id="remove-warning" className="warning-text">
          {deleteFiles ? t('userDialog.removeDeleteWarning', { name: user.username }) : t('userDialog.removeKeepWarning', { name: user.username })}
        </p>
        <p className="form-error" role="alert">
          {error}
        </p>
        <ConfirmActions
          label={deleteFiles ? t('userDialog.removeDelete') : t('userDialog.removeKeep')}
          busyLabel={t('ssh.removing')}
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
