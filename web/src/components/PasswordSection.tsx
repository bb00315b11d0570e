import { useRef, useState, type FormEvent } from 'react';
import type { AccountApi } from '../api/account';
import { ApiError, messageOf } from '../api/errors';
import { newPasswordProblem } from '../lib/account-rules';
import { Icon } from './icons';
import { PasswordField } from './PasswordField';
import { t } from '../lib/i18n';
import { SectionHead } from './SectionHead';

/**
 * Change your own password: current, new, new again. This session stays
 * signed in; the server ends the others and every path token, which the
 * sessions list then shows.
 */
export function PasswordSection({ api, user, onChanged }: { api: AccountApi; user: string; onChanged: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<{ text: string; field: 'current' | 'next' | 'confirm' | null } | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const currentRef = useRef<HTMLInputElement>(null);
  const nextRef = useRef<HTMLInputElement>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    setDone(false);
    if (!current) {
      setError({ text: t('password.enterCurrent'), field: 'current' });
      return currentRef.current?.focus();
    }
    const problem = newPasswordProblem(next, confirm, current);
    if (problem) {
      setError({ text: problem, field: problem === t('rules.passwordMismatch') ? 'confirm' : 'next' });
      return nextRef.current?.focus();
    }
    setBusy(true);
    setError(null);
    try {
      await api.changePassword(current, next);
      setCurrent('');
      setNext('');
      setConfirm('');
      // Said once, beside the button (a toast as well said it twice, and twice to a screen reader).
      setDone(true);
      onChanged();
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'invalid_credentials' || err.status === 403)) {
        setError({ text: t('password.wrongCurrent'), field: 'current' });
        setCurrent('');
        currentRef.current?.focus();
      } else setError({ text: messageOf(err), field: err instanceof ApiError && err.status === 400 ? 'next' : null });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="settings-section" aria-labelledby="password-title">
      <SectionHead id="password-title" icon="lock" title={t('password.title')} help={t('password.help')} />
      <form className="stack password-form" onSubmit={submit} noValidate aria-label={t('password.change')}>
        {/* For password managers: which account this new password belongs to. */}
        <input type="text" name="username" autoComplete="username" value={user} readOnly hidden />
        <PasswordField ref={currentRef} label={t('password.current')} name="current-password" autoComplete="current-password" value={current} onChange={setCurrent} invalid={error?.field === 'current'} describedBy="password-error" />
        <PasswordField ref={nextRef} label={t('password.new')} name="new-password" autoComplete="new-password" value={next} onChange={setNext} invalid={error?.field === 'next'} describedBy="password-error" />
        <PasswordField label={t('password.again')} name="confirm-password" autoComplete="new-password" value={confirm} onChange={setConfirm} invalid={error?.field === 'confirm'} describedBy="password-error" />
        <p id="password-error" className="form-error" role="alert">
          {error ? (
            <>
              <Icon name="alert" size={18} />
              <span>{error.text}</span>
            </>
          ) : null}
        </p>
        <div className="section-actions">
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? t('password.changing') : t('password.change')}
          </button>
          <span className="form-ok" role="status">
            {done ? (
              <>
                <Icon name="check" size={18} /> {t('password.changed')}
              </>
            ) : null}
          </span>
        </div>
      </form>
    </section>
  );
}
