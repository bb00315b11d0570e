import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { AccountApi, TotpSetup } from '../api/account';
import { ApiError, messageOf } from '../api/errors';
import { cleanCode, groupSecret } from '../lib/account-rules';
import { copyText } from '../lib/clipboard';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { QrCode } from './QrCode';
import { FormActions } from './FormActions';

const wrongCode = (e: unknown) => e instanceof ApiError && (e.code === 'invalid_credentials' || e.status === 400 || e.status === 401 || e.status === 403);
const WRONG_CODE = 'That code is not right. Enter the code your app shows now (it changes every 30 seconds).';

/** The code field of the TOTP dialogs: digits from the app (or a recovery code), one-time-code autofill. */
function CodeField({ value, onChange, error, label = 'Code from your app' }: { value: string; onChange: (v: string) => void; error: string | null; label?: string }) {
  return (
    <label className="field">
      <span>{label}</span>
      <input name="totp-code" className="code-input" autoComplete="one-time-code" inputMode="numeric" autoFocus spellCheck={false} maxLength={64} value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby="totp-error" />
    </label>
  );
}

/**
 * Turning two-step verification on: the server makes a secret (not yet in
 * force), shown as a QR code and as text; a code from the app confirms it;
 * then the recovery codes, shown this once.
 */
export function TotpSetupDialog({ api, user, onEnabled, onClose }: { api: AccountApi; user: string; onEnabled: () => void; onClose: () => void }) {
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const started = useRef(false);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    // One secret per opening (StrictMode's second effect run must not make another).
    if (started.current) return;
    started.current = true;
    setLoadError(null);
    api.totpBegin().then(setSetup, (e: unknown) => {
      setLoadError(messageOf(e));
      started.current = false;
    });
  }, [api, attempt]);

  return (
    <Dialog title={codes ? 'Save your recovery codes' : 'Set up two-step verification'} onClose={onClose} wide>
      {codes ? (
        <RecoveryCodes codes={codes} user={user} onDone={onClose} />
      ) : setup ? (
        <TotpConfirm
          api={api}
          setup={setup}
          onConfirmed={(c) => {
            setCodes(c);
            onEnabled();
          }}
          onClose={onClose}
        />
      ) : loadError ? (
        <div className="stack">
          <p className="form-error" role="alert">
            <Icon name="alert" size={18} />
            <span>{loadError}</span>
          </p>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onClose}>
              Cancel
            </button>
            <button type="button" className="button primary" onClick={() => setAttempt((a) => a + 1)}>
              <Icon name="retry" size={18} /> Try again
            </button>
          </div>
        </div>
      ) : (
        <div className="preview-loading" role="status" aria-label="Making a secret">
          <span className="spinner" />
        </div>
      )}
    </Dialog>
  );
}

function TotpConfirm({ api, setup, onConfirmed, onClose }: { api: AccountApi; setup: TotpSetup; onConfirmed: (codes: string[]) => void; onClose: () => void }) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);
  const secret = groupSecret(setup.secret);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const c = cleanCode(code);
    if (!/^\d{6,8}$/.test(c)) return setError('Enter the 6-digit code your app shows.');
    setBusy(true);
    setError(null);
    try {
      onConfirmed(await api.totpConfirm(c));
    } catch (err) {
      setError(wrongCode(err) ? WRONG_CODE : messageOf(err));
      setCode('');
      setBusy(false);
    }
  }

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <div className="totp-setup">
        <QrCode text={setup.otpauth_url} label="QR code for your authenticator app" />
        <div className="stack totp-steps">
          <p>
            <strong>1.</strong> Scan the QR code with an authenticator app (Aegis, Google Authenticator, 1Password, Bitwarden…).
          </p>
          <div>
            <p className="muted small">Cannot scan it? Enter this key in the app instead:</p>
            <div className="secret-row">
              <code className="totp-secret" data-secret={setup.secret} aria-label="Secret key">
                {secret}
              </code>
              <button
                type="button"
                className="icon-button small"
                aria-label="Copy the key"
                title="Copy the key"
                onClick={async () => {
                  setCopied(await copyText(setup.secret));
                }}
              >
                <Icon name={copied ? 'check' : 'copy'} size={16} />
              </button>
            </div>
          </div>
          <p>
            <strong>2.</strong> Enter the code the app shows.
          </p>
          <CodeField value={code} onChange={setCode} error={error} />
        </div>
      </div>
      <p id="totp-error" className="form-error" role="alert">
        {error ? (
          <>
            <Icon name="alert" size={18} />
            <span>{error}</span>
          </>
        ) : null}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Checking…' : 'Turn on'}
        </button>
      </div>
    </form>
  );
}

/** The recovery codes, shown once: each signs in once instead of a code from the app. Copy or download them. */
function RecoveryCodes({ codes, user, onDone }: { codes: string[]; user: string; onDone: () => void }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const text = `File Cloud recovery codes for ${user} (${location.host})\nEach code works once, instead of a code from your authenticator app.\n\n${codes.join('\n')}\n`;
  const [href] = useState(() => URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' })));
  useEffect(() => () => URL.revokeObjectURL(href), [href]);
  return (
    <div className="stack">
      <p className="ok-text">
        <Icon name="shield" size={18} /> Two-step verification is on. Signing in now asks for a code from your app.
      </p>
      <p className="warning-text" id="codes-once">
        <strong>Save these recovery codes now: you won’t see them again.</strong> If you lose your phone, each one signs you in once instead of a code.
      </p>
      {codes.length ? (
        <ol className="recovery-codes" aria-label="Recovery codes" aria-describedby="codes-once">
          {codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ol>
      ) : (
        <p className="muted">The server sent no recovery codes.</p>
      )}
      <p className="share-status" role="status">
        {copied === true ? <strong>Codes copied.</strong> : copied === false ? <strong>Copy did not work here: download them instead.</strong> : null}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={async () => setCopied(await copyText(codes.join('\n')))}>
          <Icon name="copy" size={18} /> Copy codes
        </button>
        <a className="button" href={href} download="file-cloud-recovery-codes.txt">
          <Icon name="download" size={18} /> Download
        </a>
        <button type="button" className="button primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

/** Turning two-step verification off needs a current code (or a recovery code), so a stolen session alone cannot. */
export function TotpOffDialog({ api, onDisabled, onClose }: { api: AccountApi; onDisabled: () => void; onClose: () => void }) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const c = cleanCode(code);
    if (!c) return setError('Enter the code your app shows, or a recovery code.');
    setBusy(true);
    setError(null);
    try {
      await api.totpDisable(c);
      onDisabled();
      onClose();
    } catch (err) {
      setError(wrongCode(err) ? WRONG_CODE : messageOf(err));
      setCode('');
      setBusy(false);
    }
  }

  return (
    <Dialog title="Turn off two-step verification?" onClose={onClose} describedBy="totp-off-warning">
      <form className="stack" onSubmit={submit} noValidate>
        <p id="totp-off-warning" className="warning-text">
          Signing in will need only your password again. Your recovery codes stop working.
        </p>
        <CodeField value={code} onChange={setCode} error={error} label="Code from your app, or a recovery code" />
        <FormActions errorId="totp-error" error={error} busy={busy} label="Turn off" busyLabel="Turning off…" danger onCancel={onClose} />
      </form>
    </Dialog>
  );
}
