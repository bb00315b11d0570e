import { useState } from 'react';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { onLinkClick } from '../lib/router';
import { Icon, Logo } from './icons';
import { useNotify } from './Toasts';
import { withBase } from '../lib/base';

/** The top bar: brand (home), shortcuts, who is signed in, sign out. */
export function AppHeader({ storage, onShortcuts }: { storage: StorageApi; onShortcuts: () => void }) {
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  return (
    <header className="app-header">
      <a href={withBase('/browse/')} className="brand" onClick={(e) => onLinkClick(e, '/browse/')}>
        <Logo size={28} />
        <span>File Cloud</span>
      </a>
      <span className="spacer" />
      <button type="button" className="icon-button hide-phone" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={onShortcuts}>
        <Icon name="keyboard" />
      </button>
      <span className="user-name" title={`Signed in as ${storage.user}`}>
        <span className="avatar" aria-hidden="true">
          {storage.user.slice(0, 1).toUpperCase()}
        </span>
        <span className="hide-phone">{storage.user}</span>
      </span>
      <button
        type="button"
        className="button ghost small"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          storage.client.logout().catch((e: unknown) => {
            setBusy(false);
            notify(messageOf(e), 'error');
          });
        }}
      >
        <Icon name="logout" size={18} />
        <span>Sign out</span>
      </button>
    </header>
  );
}
