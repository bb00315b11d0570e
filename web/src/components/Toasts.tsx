import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { Icon } from './icons';
import { t as translate } from '../lib/i18n';

/** A button in a toast (Undo): it runs once, and the toast goes. */
export type ToastAction = { readonly label: string; readonly run: () => void };
type Toast = { id: number; text: string; kind: 'info' | 'error'; action?: ToastAction };
type Notify = (text: string, kind?: Toast['kind'], action?: ToastAction) => void;

/** How long a toast stays: an error longer, one with an action longest (time to reach its button). */
const SHOWN_MS = { info: 5000, error: 9000, action: 10_000 };

const ToastContext = createContext<Notify>(() => undefined);

/** Short messages after an action ("Moved 3 items", or an error sentence), announced to screen readers. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const notify = useCallback<Notify>(
    (text, kind = 'info', action) => {
      const id = next.current++;
      setToasts((t) => [...t.slice(-3), { id, text, kind, action }]);
      setTimeout(() => dismiss(id), action ? SHOWN_MS.action : SHOWN_MS[kind]);
    },
    [dismiss],
  );
  const value = useMemo(() => notify, [notify]);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : undefined}>
            {t.kind === 'error' ? <Icon name="alert" size={18} /> : <Icon name="check" size={18} />}
            <span>{t.text}</span>
            {t.action ? (
              <button
                type="button"
                className="button small toast-action"
                onClick={() => {
                  dismiss(t.id);
                  t.action?.run();
                }}
              >
                {t.action.label}
              </button>
            ) : null}
            <button type="button" className="icon-button small" aria-label={translate('toast.dismiss')} onClick={() => dismiss(t.id)}>
              <Icon name="close" size={16} />
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export const useNotify = (): Notify => useContext(ToastContext);
