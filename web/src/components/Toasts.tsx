import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { Icon } from './icons';

type Toast = { id: number; text: string; kind: 'info' | 'error' };
type Notify = (text: string, kind?: Toast['kind']) => void;

const ToastContext = createContext<Notify>(() => undefined);

/** Short messages after an action ("Moved 3 items", or an error sentence), announced to screen readers. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const notify = useCallback<Notify>(
    (text, kind = 'info') => {
      const id = next.current++;
      setToasts((t) => [...t.slice(-3), { id, text, kind }]);
      setTimeout(() => dismiss(id), kind === 'error' ? 9000 : 5000);
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
            <button type="button" className="icon-button small" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
              <Icon name="close" size={16} />
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export const useNotify = (): Notify => useContext(ToastContext);
