import { useRef, useState } from 'react';
import type { KeysApi, NewApiKey } from '../api/keys';
import { keyExpiryChoices, keyExpiresIn, type KeyExpiry } from '../lib/account-rules';
import { publicUrlOf, withBase } from '../lib/base';
import { copyText } from '../lib/clipboard';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { FormActions } from './FormActions';
import { useNamedForm } from './useNamedForm';
import { t } from '../lib/i18n';

/** Make an app password: a name, read-only or not, an expiry; then the key, shown this once, to copy. */
export function KeyDialog({ api, user, onCreated, onClose }: { api: KeysApi; user: string; onCreated: () => void; onClose: () => void }) {
  const [created, setCreated] = useState<NewApiKey | null>(null);
  return (
    <Dialog title={created ? t('appKey.yourNew') : t('appKey.new')} onClose={onClose} wide={!!created}>
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
  const { name, setName, error, busy, nameRef, submit } = useNamedForm(t('appKey.nameMissing'));
  const [readOnly, setReadOnly] = useState(false);
  const [expiry, setExpiry] = useState<KeyExpiry>('never');

  return (
    <form className="stack" onSubmit={submit(async (n) => onCreated(await api.create({ name: n, readOnly, expiresIn: keyExpiresIn(expiry) })))} noValidate>
      <label className="field">
        <span>{t('appKey.name')}</span>
        <input ref={nameRef} name="key-name" autoFocus autoComplete="off" placeholder={t('appKey.namePlaceholder')} maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={error && !name.trim() ? true : undefined} aria-describedby="key-error" />
      </label>
      <label className="field">
        <span>{t('appKey.expires')}</span>
        <select name="key-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value as KeyExpiry)}>
          {keyExpiryChoices().map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <label className="check-field">
        <input type="checkbox" name="key-read-only" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />
        <span>
          {t('appKey.readOnly')}
          <span className="muted small block-line">{t('appKey.readOnlyHelp')}</span>
        </span>
      </label>
      <FormActions errorId="key-error" error={error} busy={busy} label={t('appKey.create')} busyLabel={t('appKey.creating')} onCancel={onClose} />
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
        <strong>{t('appKey.copyNow')}</strong> {t('appKey.onlyHash')}
      </p>
      <div className="copy-row">
        <input ref={input} className="share-url key-value" readOnly value={created.key} aria-label={t('appKey.label')} aria-describedby="key-once" onFocus={(e) => e.currentTarget.select()} />
        <button type="button" className="button primary" onClick={async () => setCopied((await copyText(created.key, input.current)) ? 'yes' : 'no')}>
          <Icon name={copied === 'yes' ? 'check' : 'copy'} size={18} /> {t('common.copy')}
        </button>
      </div>
      <p className="share-status" role="status">
        {copied === 'yes' ? <strong>{t('common.copied')}</strong> : copied === 'no' ? <strong>{t('common.copyByHand')}</strong> : null}
      </p>
      <dl className="key-usage">
        <div>
          <dt>WebDAV</dt>
          <dd>
            {t('appKey.davAddress')} <code>{dav}</code>, {t('appKey.davUser')} <code>{user}</code>, {t('appKey.davPassword')}
          </dd>
        </div>
        <div>
          <dt>{t('appKey.scripts')}</dt>
          <dd>
            <code>Authorization: Bearer …</code> {t('appKey.bearerWith')} <code>/api/</code>, <code>/storage/</code>
          </dd>
        </div>
        <div>
          <dt>{t('appKey.access')}</dt>
          <dd>{created.read_only ? t('appKey.accessReadOnly') : t('appKey.accessFull')}</dd>
        </div>
      </dl>
      <div className="dialog-actions">
        <button type="button" className="button primary" onClick={onClose}>
          {t('common.done')}
        </button>
      </div>
    </div>
  );
}
