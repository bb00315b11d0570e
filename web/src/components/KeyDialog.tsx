import { useRef, useState } from 'react';
import type { KeysApi, NewApiKey } from '../api/keys';
import { KEY_EXPIRY_CHOICES, keyExpiresIn, type KeyExpiry } from '../lib/account-rules';
import { publicUrlOf, withBase } from '../lib/base';
import { copyText } from '../lib/clipboard';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { FormActions } from './FormActions';
import { useNamedForm } from './useNamedForm';

/** Make an app password: a name, read-only or not, an expiry; then the key, shown this once, to copy. */
export function KeyDialog({ api, user, onCreated, onClose }: { api: KeysApi; user: string; onCreated: () => void; onClose: () => void }) {
  const [created, setCreated] = useState<NewApiKey | null>(null);
  return (
    <Dialog title={created ? 'Your new app password' : 'New app password'} onClose={onClose} wide={!!created}>
      {created ? (
        <KeyCreated created={created} user={user} onClose={onClose} />
      ) : (
        <KeyForm
          api={api}
          onCreated={(k) => {
            setCreated(k);
            onCreated();
          }}
          onClose={onClose}
        />
      )}
    </Dialog>
  );
}

function KeyForm({ api, onCreated, onClose }: { api: KeysApi; onCreated: (k: NewApiKey) => void; onClose: () => void }) {
  const { name, setName, error, busy, nameRef, submit } = useNamedForm('Give it a name, so you know later what uses it.');
  const [readOnly, setReadOnly] = useState(false);
  const [expiry, setExpiry] = useState<KeyExpiry>('never');

  return (
    <form className="stack" onSubmit={submit(async (n) => onCreated(await api.create({ name: n, readOnly, expiresIn: keyExpiresIn(expiry) })))} noValidate>
      <label className="field">
        <span>Name</span>
        <input ref={nameRef} name="key-name" autoFocus autoComplete="off" placeholder="e.g. Laptop WebDAV, backup script" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={error && !name.trim() ? true : undefined} aria-describedby="key-error" />
      </label>
      <label className="field">
        <span>Expires</span>
        <select name="key-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value as KeyExpiry)}>
          {KEY_EXPIRY_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <label className="check-field">
        <input type="checkbox" name="key-read-only" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />
        <span>
          Read-only
          <span className="muted small block-line">It can list and download files, but not upload, change or delete anything.</span>
        </span>
      </label>
      <FormActions errorId="key-error" error={error} busy={busy} label="Create app password" busyLabel="Creating…" onCancel={onClose} />
    </form>
  );
}

/** The key, once: copy it now; how to use it (WebDAV with the username, or a Bearer token). */
function KeyCreated({ created, user, onClose }: { created: NewApiKey; user: string; onClose: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const dav = publicUrlOf(withBase(`/dav/${encodeURIComponent(user)}/`));
  return (
    <div className="stack">
      <p className="warning-text" id="key-once">
        <strong>Copy it now: you won’t see it again.</strong> File Cloud keeps only a hash of it. If you lose it, revoke it and make a new one.
      </p>
      <div className="copy-row">
        <input ref={input} className="share-url key-value" readOnly value={created.key} aria-label="App password" aria-describedby="key-once" onFocus={(e) => e.currentTarget.select()} />
        <button type="button" className="button primary" onClick={async () => setCopied((await copyText(created.key, input.current)) ? 'yes' : 'no')}>
          <Icon name={copied === 'yes' ? 'check' : 'copy'} size={18} /> Copy
        </button>
      </div>
      <p className="share-status" role="status">
        {copied === 'yes' ? <strong>Copied.</strong> : copied === 'no' ? <strong>Select it and copy it (Ctrl+C).</strong> : null}
      </p>
      <dl className="key-usage">
        <div>
          <dt>WebDAV</dt>
          <dd>
            address <code>{dav}</code>, username <code>{user}</code>, this app password as the password
          </dd>
        </div>
        <div>
          <dt>Scripts</dt>
          <dd>
            <code>Authorization: Bearer …</code> with this app password, on <code>/api/</code> and <code>/storage/</code>
          </dd>
        </div>
        <div>
          <dt>Access</dt>
          <dd>{created.read_only ? 'Read-only: listing and downloads only' : 'Full access to your files'}</dd>
        </div>
      </dl>
      <div className="dialog-actions">
        <button type="button" className="button primary" onClick={onClose}>
          Done
        </button>
      </div>
    </div>
  );
}
