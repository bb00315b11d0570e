import { useEffect } from 'react';
import { Dialog } from './Dialog';

export const SHORTCUTS: [string, string][] = [
  ['↑ / ↓', 'Move between items (selects)'],
  ['Shift + ↑ / ↓', 'Extend the selection'],
  ['Ctrl + ↑ / ↓', 'Move without selecting'],
  ['Space', 'Select or unselect the current item'],
  ['Ctrl / ⌘ + A', 'Select everything'],
  ['Enter', 'Open the folder or preview the file'],
  ['Delete', 'Delete the selection'],
  ['F2', 'Rename'],
  ['Shift + F10 / Menu', 'Actions for the current item'],
  ['Backspace / Alt + ↑', 'Go to the parent folder'],
  ['← / →', 'Previous / next file in a preview'],
  ['Escape', 'Close a dialog or menu, clear the selection'],
  ['/', 'Search file and folder names'],
  ['?', 'Show these shortcuts'],
];

export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <dl className="shortcuts">
        {SHORTCUTS.map(([k, v]) => (
          <div key={k}>
            <dt>
              <kbd>{k}</kbd>
            </dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}

/**
 * The page-wide "?" key that shows the shortcuts, unless `blocked` (a dialog
 * is already open) or the user is typing it into a field.
 */
export function useShortcutsKey(blocked: boolean, show: () => void) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '?' || blocked || (e.target as HTMLElement).closest('input, textarea, select')) return;
      e.preventDefault();
      show();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [blocked, show]);
}
