import { useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';
import type { NewShare } from '../api/shares';
import { DEFAULT_EXPIRY, EXPIRY_PRESETS, expiresIn, parseLimit, tomorrow, type ExpiryChoice } from '../lib/share-rules';
import { Icon } from './icons';

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
    if (seconds === undefined) return setError('Choose a date after today.');
    const maxDownloads = uploadOnly ? null : parseLimit(limit);
    if (maxDownloads === undefined) return setError('The download limit is a whole number from 1, or empty for no limit.');
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
        {isFile
          ? 'Anyone with the link can download this file without an account.'
          : uploadOnly
            ? 'Anyone with the link can upload files into this folder without an account, and see nothing in it.'
            : 'Anyone with the link can browse and download this folder without an account.'}
      </p>
      <div className="share-fields">
        <label className="field">
          <span>Expires</span>
          <select value={expiry} onChange={(e) => setExpiry(e.target.value as ExpiryChoice)}>
            {EXPIRY_PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {expiry === 'date' ? (
          <label className="field">
            <span>Last day</span>
            <input type="date" value={date} min={tomorrow(new Date())} required onChange={(e) => setDate(e.target.value)} />
          </label>
        ) : null}
        <label className="field">
          <span>Password (optional)</span>
          <input type="password" value={password} autoComplete="new-password" placeholder="No password" onChange={(e) => setPassword(e.target.value)} />
        </label>
        {!uploadOnly ? (
          <label className="field">
            <span>Download limit (optional)</span>
            <input type="number" inputMode="numeric" min={1} step={1} value={limit} placeholder="No limit" onChange={(e) => setLimit(e.target.value)} />
          </label>
        ) : null}
      </div>
      {!isFile ? (
        <label className="check-field">
          <input type="checkbox" checked={uploadOnly} onChange={(e) => setUploadOnly(e.target.checked)} />
          <span>
            <strong>Upload only</strong>
            <span className="muted small"> — visitors can add files to this folder but cannot see or download anything in it.</span>
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
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy}>
          <Icon name="link" size={18} /> {busy ? 'Creating…' : 'Create link'}
        </button>
      </div>
    </form>
  );
}
