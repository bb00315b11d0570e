import { useEffect, useRef, useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';
import { nameProblem } from '../api/paths';
import { Dialog } from './Dialog';
import { t } from '../lib/i18n';

/** Asks for a name (new folder, rename); checks it before asking the server, shows the server's refusal in place. */
export function NameDialog(props: {
  title: string;
  label: string;
  submitLabel: string;
  initial: string;
  /** How much of the initial name to select (the stem, for a rename). */
  selectLength?: number;
  taken: (name: string) => boolean;
  onSubmit: (name: string) => Promise<void>;
  onClose: () => void;
}) {
  const [name, setName] = useState(props.initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const el = input.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(0, props.selectLength ?? el.value.length);
  }, [props.selectLength]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const n = name.trim() === name ? name : name.trim();
    const problem = nameProblem(n);
    if (problem) return setError(problem);
    if (n === props.initial) return props.onClose();
    if (props.taken(n)) return setError(t('dialog.nameTaken', { name: n }));
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit(n);
      props.onClose();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={submit} className="stack">
        <label className="field">
          <span>{props.label}</span>
          <input ref={input} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby="name-error" spellCheck={false} autoComplete="off" />
        </label>
        <p id="name-error" className="form-error" role="alert">
          {error}
        </p>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={props.onClose}>
            {t('dialog.cancel')}
          </button>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? t('dialog.working') : props.submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
