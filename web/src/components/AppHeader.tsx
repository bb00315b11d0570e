import { useState } from 'react';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { onLinkClick, RECENT_PATH, SHARED_PATH, TRASH_PATH, useLocation } from '../lib/router';
import { useAccount } from './useAccount';
import { Icon, Logo } from './icons';
import { useNotify } from './Toasts';
import { UsageBar } from './UsageBar';
import { SearchBox } from './SearchBox';
import { AccountMenu } from './AccountMenu';
import { withBase } from '../lib/base';
import { WITH_ME_PATH } from '../lib/place';
import { t } from '../lib/i18n';

const PAGES = [
  { to: '/browse/', label: 'nav.myFiles', icon: 'home', current: (p: string) => p.startsWith('/browse') },
  { to: RECENT_PATH, label: 'nav.recent', icon: 'clock', current: (p: string) => p === RECENT_PATH },
  { to: SHARED_PATH, label: 'nav.sharedByMe', icon: 'link', current: (p: string) => p === SHARED_PATH },
  { to: WITH_ME_PATH, label: 'nav.sharedWithMe', icon: 'users', current: (p: string) => p === WITH_ME_PATH || p.startsWith(`${WITH_ME_PATH}/`) },
] as const;
/** Shown only when the server keeps a trash (GET /api/me trash_days > 0). */
const TRASH_PAGE = { to: TRASH_PATH, label: 'nav.trash', icon: 'trash', current: (p: string) => p === TRASH_PATH } as const;

/**
 * The top bar: brand (home), the app's pages, search, the storage figure, who
 * is signed in (the account menu, with the keyboard shortcuts) and sign out.
 * On a phone the brand and the sign-out button give their room to the search
 * box; signing out is then in the account menu.
 */
export function AppHeader({ storage, onShortcuts }: { storage: StorageApi; onShortcuts?: () => void }) {
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  const here = useLocation();
  const { me } = useAccount();
  const pages = (me?.trash_days ?? 0) > 0 ? [...PAGES, TRASH_PAGE] : PAGES;
  const signOut = () => {
    setBusy(true);
    storage.client.logout().catch((e: unknown) => {
      setBusy(false);
      notify(messageOf(e), 'error');
    });
  };
  return (
    <header className="app-header">
      <a href={withBase('/browse/')} className="brand hide-phone" onClick={(e) => onLinkClick(e, '/browse/')}>
        <Logo size={28} />
        <span>File Cloud</span>
      </a>
      <nav className="app-nav" aria-label={t('nav.pages')}>
        {pages.map((p) => (
          <a key={p.to} href={withBase(p.to)} className="nav-link" aria-label={t(p.label)} title={t(p.label)} aria-current={p.current(here) ? 'page' : undefined} onClick={(e) => onLinkClick(e, p.to)}>
            <Icon name={p.icon} size={18} />
            <span>{t(p.label)}</span>
          </a>
        ))}
      </nav>
      <SearchBox storage={storage} />
      <span className="spacer" />
      <UsageBar client={storage.client} />
      <AccountMenu user={storage.user} onShortcuts={onShortcuts} onSignOut={signOut} />
      <button type="button" className="button ghost small hide-phone" aria-label={t('nav.signOut')} title={t('nav.signOut')} disabled={busy} onClick={signOut}>
        <Icon name="logout" size={18} />
        <span>{t('nav.signOut')}</span>
      </button>
    </header>
  );
}
