import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { useNotify } from './Toasts';
import { t } from '../lib/i18n';

type Props = {
  storage: StorageApi;
  folder: Segments;
  entry: Entry;
  /** After a save (of the file, or of a copy named `name`): refresh the folder. */
  onSaved: (name: string) => void;
  onClose: () => void;
};

/** What stands between the text and the user: nothing, a question before closing, a conflict, or an error. */
type Alert = { kind: 'unsaved' } | { kind: 'conflict' } | { kind: 'error'; text: string } | null;

/**
 * A plain-text editor for one file: monospace, Tab inserts a tab, Ctrl+S
 * saves. Saving sends If-Match with the ETag the text was read at, so a
 * change made meanwhile by anyone else is never overwritten silently: the
 * server answers 412 and the editor offers to reload the file or to save
 * this text as a copy. Closing with unsaved changes asks first.
 */
export function TextEditorDialog({ storage, folder, entry, onSaved, onClose }: Props) {
  const notify = useNotify();
  const path = [...folder, entry.name];
  const [loaded, setLoaded] = useState<{ text: string; etag: string } | null>(null);
  const [text, setText] = useState('');
  const [loadError, setLoadError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [alert, setAlert] = useState<Alert>(null);
  const [status, setStatus] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  const dirty = loaded !== null && text !== loaded.text;

  const load = useCallback(
    (signal?: AbortSignal) =>
      storage.readForEdit([...folder, entry.name], signal).then(
        (r) => {
          if (signal?.aborted) return;
          setLoaded(r);
          setText(r.text);
          setAlert(null);
          setStatus('');
          setTimeout(() => area.current?.focus(), 0);
        },
        (e: unknown) => !signal?.aborted && setLoadError(messageOf(e)),
      ),
    [storage, folder, entry.name],
  );

  useEffect(() => {
    const ctrl = new AbortController();
    void load(ctrl.signal);
    return () => ctrl.abort();
  }, [load]);

  // Leaving the page (reload, closing the tab) with unsaved text asks too.
  useEffect(() => {
    if (!dirty) return;
    const guard = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', guard);
    return () => window.removeEventListener('beforeunload', guard);
  }, [dirty]);

  async function save() {
    if (!loaded || busy) return;
    setBusy(true);
    setStatus(t('editor.saving'));
    try {
      const etag = await storage.saveText(path, text, loaded.etag);
      setLoaded({ text, etag });
      setAlert(null);
      setStatus(t('editor.saved'));
      onSaved(entry.name);
    } catch (e) {
      setStatus('');
      if (e instanceof ApiError && e.status === 412) setAlert({ kind: 'conflict' });
      else setAlert({ kind: 'error', text: messageOf(e) });
    } finally {
      setBusy(false);
    }
  }

  async function saveAsCopy() {
    setBusy(true);
    try {
      const name = await storage.saveCopy(folder, entry.name, text);
      notify(t('editor.savedAsCopy', { name, original: entry.name }));
      onSaved(name);
      onClose();
    } catch (e) {
      setAlert({ kind: 'error', text: messageOf(e) });
    } finally {
      setBusy(false);
    }
  }

  async function reload() {
    setBusy(true);
    setStatus(t('common.loading'));
    await load();
    setBusy(false);
  }

  const requestClose = () => (dirty ? setAlert({ kind: 'unsaved' }) : onClose());

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Tab' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      const el = e.currentTarget;
      el.setRangeText('\t', el.selectionStart, el.selectionEnd, 'end');
      setText(el.value);
    } else if (e.key === 's' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void save();
    }
  }

  let banner = null;
  if (alert?.kind === 'unsaved')
    banner = (
      <div className="editor-alert" role="alert">
        <p>{t('editor.unsaved')}</p>
        <button type="button" className="button danger small" onClick={onClose}>
          {t('editor.discard')}
        </button>
        <button type="button" className="button small" onClick={() => setAlert(null)}>
          {t('editor.keepEditing')}
        </button>
      </div>
    );
  else if (alert?.kind === 'conflict')
    banner = (
      <div className="editor-alert" role="alert">
        <p>{t('editor.conflict', { name: entry.name })}</p>
        <button type="button" className="button small" disabled={busy} onClick={() => void reload()}>
          {t('editor.reload')}
        </button>
        <button type="button" className="button primary small" disabled={busy} onClick={() => void saveAsCopy()}>
          {t('editor.saveCopy')}
        </button>
      </div>
    );
  else if (alert?.kind === 'error')
    banner = (
      <div className="editor-alert error" role="alert">
        <p>{alert.text}</p>
      </div>
    );

  return (
    <Dialog
      title={
        <span className="preview-title">
          <Icon name="pencil" size={20} />
          <span className="preview-name">{entry.name}</span>
          {dirty ? <span className="muted small"> · {t('editor.edited')}</span> : null}
        </span>
      }
      onClose={requestClose}
      className="editor-dialog"
      wide
      footer={
        <>
          <span className="editor-status" role="status">
            {status || t('editor.keys')}
          </span>
          <button type="button" className="button" onClick={requestClose}>
            {t('dialog.close')}
          </button>
          <button type="button" className="button primary" disabled={!loaded || busy || !dirty} onClick={() => void save()}>
            {t('editor.save')}
          </button>
        </>
      }
    >
      {banner}
      {loadError ? (
        <p className="error-text">{loadError}</p>
      ) : loaded ? (
        <textarea ref={area} className="editor-text" aria-label={t('editor.contents', { name: entry.name })} value={text} spellCheck={false} onChange={(e) => setText(e.target.value)} onKeyDown={onKeyDown} />
      ) : (
        <div className="preview-loading" role="status">
          <span className="spinner" aria-hidden="true" /> {t('common.loading')}
        </div>
      )}
    </Dialog>
  );
}
