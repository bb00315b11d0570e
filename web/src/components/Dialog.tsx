import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/**
 * A modal built on <dialog>.showModal(): the page behind is inert, focus stays
 * inside, Escape closes (via the cancel event), focus returns where it was.
 */
export function Dialog(props: { title: ReactNode; onClose: () => void; children: ReactNode; footer?: ReactNode; className?: string; wide?: boolean; headerExtra?: ReactNode; describedBy?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { onClose } = props;
  useEffect(() => {
    const dialog = ref.current;
    const before = document.activeElement as HTMLElement | null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      // Back to where focus was; if that is gone (a menu item, a renamed row), to the file list.
      if (before && before.isConnected && before !== document.body) before.focus();
      else document.querySelector<HTMLElement>('.file-grid [role="row"][tabindex="0"]')?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={`dialog${props.wide ? ' dialog-wide' : ''}${props.className ? ` ${props.className}` : ''}`}
      aria-labelledby={titleId}
      aria-describedby={props.describedBy}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onMouseDown={(e) => {
        // A press on the backdrop (the dialog element itself, outside its panel) closes.
        if (e.target === ref.current) onClose();
      }}
    >
      <div className="dialog-panel">
        <header className="dialog-header">
          <h2 id={titleId}>{props.title}</h2>
          {props.headerExtra}
          <button type="button" className="icon-button" aria-label={t('dialog.close')} onClick={onClose}>
            <Icon name="close" />
          </button>
        </header>
        <div className="dialog-body">{props.children}</div>
        {props.footer ? <footer className="dialog-footer">{props.footer}</footer> : null}
      </div>
    </dialog>
  );
}
