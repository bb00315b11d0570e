import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { AccountApi, TotpSetup } from '../api/account';
import { ApiError, messageOf } from '../api/errors';
import { cleanCode, groupSecret } from '../lib/account-rules';
import { copyText } from '../lib/clipboard';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { QrCode } from './QrCode';
import { FormActions } from './FormActions';
import { t } from '../lib/i18n';

const wrongCode = (e: unknown) => e instanceof ApiError && (e.code === 'invalid_credentials' || e.status === 400 || e.status === 401 || e.status === 403);
const wrongCodeText = () => t('totpDialog.wrongCode');

/** The code field of the TOTP dialogs: digits from the app (or a recovery code), one-time-code autofill. */
function CodeField({ value, onChange, error, label = t('totpDialog.codeLabel') }: { value: string; onChange: (v: string) => void; error: string | null; label?: string }) {
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
    <Dialog title={codes ? t('totpDialog.saveCodesTitle') : t('totpDialog.setupTitle')} onClose={onClose} wide>
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
              {t('dialog.cancel')}
            </button>
            <button type="button" className="button primary" onClick={() => setAttempt((a) => a + 1)}>
              <Icon name="retry" size={18} /> {t('states.tryAgain')}
            </button>
          </div>
        </div>
      ) : (
        <div className="preview-loading" role="status" aria-label={t('totpDialog.making')}>
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
    if (!/^\d{6,8}$/.test(c)) return setError(t('totpDialog.enterCode'));
    setBusy(true);
    setError(null);
    try {
      onConfirmed(await api.totpConfirm(c));
    } catch (err) {
      setError(wrongCode(err) ? wrongCodeText() : messageOf(err));
      setCode('');
      setBusy(false);
    }
  }

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <div className="totp-setup">
        <QrCode text={setup.otpauth_url} label={t('totpDialog.qr')} />
        <div className="stack totp-steps">
          <p>
            <strong>1.</strong> {t('totpDialog.step1')}
          </p>
          <div>
            <p className="muted small">{t('totpDialog.cannotScan')}</p>
            <div className="secret-row">
              <code className="totp-secret" data-secret={setup.secret} aria-label={t('totpDialog.secret')}>
                {secret}
              </code>
              <button
                type="button"
                className="icon-button small"
                aria-label={t('totpDialog.copyKey')}
                title={t('totpDialog.copyKey')}
                onClick={async () => {
                  setCopied(await copyText(setup.secret));
                }}
              >
                <Icon name={copied ? 'check' : 'copy'} size={16} />
              </button>
            </div>
          </div>
          <p>
            <strong>2.</strong> {t('totpDialog.step2')}
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
          {t('dialog.cancel')}
        </button>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? t('totpDialog.checking') : t('totpDialog.turnOn')}
        </button>
      </div>
    </form>
  );
}

/** The recovery codes, shown once: each signs in once instead of a code from the app. Copy or download them. */
function RecoveryCodes({ codes, user, onDone }: { codes: string[]; user: string; onDone: () => void }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const text = `${t('totpDialog.fileHead', { user, host: location.host })}\n${t('totpDialog.fileNote')}\n\n${codes.join('\n')}\n`;
  const [href] = useState(() => URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' })));
  useEffect(() => () => URL.revokeObjectURL(href), [href]);
  return (
    <div className="stack">
      <p className="ok-text">
        <Icon name="shield" size={18} /> {t('totpDialog.isOn')}
      </p>
      <p className="warning-text" id="codes-once">
        <strong>{t('totpDialog.saveNow')}</strong> {t('totpDialog.saveWhy')}
      </p>
      {codes.length ? (
        <ol className="recovery-codes" aria-label={t('totpDialog.codes')} aria-describedby="codes-once">
          {codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ol>
      ) : (
        <p className="muted">{t('totpDialog.noCodes')}</p>
      )}
      <p className="share-status" role="status">
        {copied === true ? <strong>{t('totpDialog.copied')}</strong> : copied === false ? <strong>{t('totpDialog.copyFailed')}</strong> : null}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={async () => setCopied(await copyText(codes.join('\n')))}>
          <Icon name="copy" size={18} /> {t('totpDialog.copyCodes')}
        </button>
        <a className="button" href={href} download="file-cloud-recovery-codes.txt">
          <Icon name="download" size={18} /> {t('action.download')}
        </a>
        <button type="button" className="button primary" onClick={onDone}>
          {t('totpDialog.saved')}
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
    if (!c) return setError(t('totpDialog.enterCodeOrRecovery'));
    setBusy(true);
    setError(null);
    try {
      await api.totpDisable(c);
      onDisabled();
      onClose();
    } catch (err) {
      setError(wrongCode(err) ? wrongCodeText() : messageOf(err));
      setCode('');
      setBusy(false);
    }
  }

  return (
    <Dialog title={t('totpDialog.offTitle')} onClose={onClose} describedBy="totp-off-warning">
      <form className="stack" onSubmit={submit} noValidate>
        <p id="totp-off-warning" className="warning-text">
          {t('totpDialog.offWarning')}
        </p>
        <CodeField value={code} onChange={setCode} error={error} label={t('totpDialog.codeOrRecovery')} />
        <FormActions errorId="totp-error" error={error} busy={busy} label={t('totpDialog.turnOff')} busyLabel={t('totpDialog.turningOff')} danger onCancel={onClose} />
      </form>
    </Dialog>
  );
}
