import { useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';
import type { NewShare } from '../api/shares';
import { DEFAULT_EXPIRY, expiryPresets, expiresIn, parseLimit, tomorrow, type ExpiryChoice } from '../lib/share-rules';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/** The options of a new share link: expiry, password, download limit, upload-only (folders). */
export function ShareOptionsForm({ isFile, onCreate, onCancel }: { isFile: boolean; onCreate: (opts: NewShare) => Promise<void>; onCancel: () => void }) {
  const [expiry, setExpiry] = useState<ExpiryChoice>(DEFAULT_EXPIRY);
  const [date, setDate] = useState('');
  const [password, setPassword] = useState('');
  const [limit, setLimit] = useState('');
  const [uploadOnly, setUploadOnly] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const seconds = expiresIn(expiry, date, new Date());
    if (seconds === undefined) return setError(t('shareForm.dateAfterToday'));
    const maxDownloads = uploadOnly ? null : parseLimit(limit);
    if (maxDownloads === undefined) return setError(t('shareForm.badLimit'));
    setBusy(true);
    setError(null);
    try {
      await onCreate({ expiresIn: seconds, password: password || undefined, maxDownloads: maxDownloads ?? undefined, uploadOnly: uploadOnly || undefined });
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <form className="stack share-form" onSubmit={submit}>
      <p>
        {isFile ? t('shareForm.aboutFile') : uploadOnly ? t('shareForm.aboutUploadOnly') : t('shareForm.aboutFolder')}
      </p>
      <div className="share-fields">
        <label className="field">
          <span>{t('appKey.expires')}</span>
          <select value={expiry} onChange={(e) => setExpiry(e.target.value as ExpiryChoice)}>
            {expiryPresets().map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {expiry === 'date' ? (
          <label className="field">
            <span>{t('shareForm.lastDay')}</span>
            <input type="date" value={date} min={tomorrow(new Date())} required onChange={(e) => setDate(e.target.value)} />
          </label>
        ) : null}
        <label className="field">
          <span>{t('shareForm.password')}</span>
          <input type="password" value={password} autoComplete="new-password" placeholder={t('shareForm.noPassword')} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {!uploadOnly ? (
          <label className="field">
            <span>{t('shareForm.limit')}</span>
            <input type="number" inputMode="numeric" min={1} step={1} value={limit} placeholder={t('shareForm.noLimit')} onChange={(e) => setLimit(e.target.value)} />
          </label>
        ) : null}
      </div>
      {!isFile ? (
        <label className="check-field">
          <input type="checkbox" checked={uploadOnly} onChange={(e) => setUploadOnly(e.target.checked)} />
          <span>
            <strong>{t('shareForm.uploadOnly')}</strong>
            <span className="muted small"> — {t('shareForm.uploadOnlyHelp')}</span>
          </span>
        </label>
      ) : null}
      <p className="form-error" role="alert">
        {error ? (
          <>
            <Icon name="alert" size={18} /> {error}
          </>
        ) : null}
      </p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          {t('dialog.cancel')}
        </button>
        <button type="submit" className="button primary" disabled={busy}>
          <Icon name="link" size={18} /> {busy ? t('appKey.creating') : t('shareForm.create')}
        </button>
      </div>
    </form>
  );
}
