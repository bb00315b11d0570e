import { useEffect, useMemo, useState } from 'react';
import type { ApiClient } from './api/client';
import { segmentsFromBrowsePath } from './api/paths';
import { StorageApi } from './api/storage';
import { Browser } from './components/Browser';
import { LoginPage } from './components/LoginPage';
import { SettingsPage } from './components/SettingsPage';
import { SharedPage } from './components/SharedPage';
import { NotFoundPage } from './components/NotFoundPage';
import { ToastProvider } from './components/Toasts';
import { AccountProvider } from './components/useAccount';
import { UsersPage } from './components/UsersPage';
import { WithMePage } from './components/WithMePage';
import { SharedFolder } from './components/SharedFolder';
import { ownerPathFrom, WITH_ME_PATH } from './lib/place';
import { AUDIT_PATH, GROUPS_PATH, isAppPath, navigate, PAGE_PATHS, RECENT_PATH, SETTINGS_PATH, SHARED_PATH, TRASH_PATH, USERS_PATH, useLocation } from './lib/router';
import { TrashPage } from './components/TrashPage';
import { AuditPage } from './components/AuditPage';
import { GroupsPage } from './components/GroupsPage';
import { RecentPage } from './components/RecentPage';
import { stripBase } from './lib/base';
import { t } from './lib/i18n';

/** Routes: /login, /browse/<percent-encoded path>/ for the signed-in user's folders, /shared for their share links, /settings for their account, /admin/users for admins. */
export function App({ client }: { client: ApiClient }) {
  const pathname = useLocation();
  const [user, setUser] = useState<string | null>(client.username);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(
    () =>
      client.onSessionEnd((why) => {
        setUser(null);
        setNotice(why === 'expired' ? t('session.ended') : null);
        const here = stripBase(location.pathname);
        const back = (here.startsWith('/browse') || here.startsWith('/with-me/') || PAGE_PATHS.includes(here)) && why === 'expired' ? `?next=${encodeURIComponent(here)}` : '';
        navigate(`/login${back}`, { replace: true });
      }),
    [client],
  );

  const storage = useMemo(() => (user ? new StorageApi(client, user) : null), [client, user]);
  const segments = useMemo(() => segmentsFromBrowsePath(pathname), [pathname]);
  const page = PAGE_PATHS.includes(pathname) ? pathname : null;
  const ownerPath = useMemo(() => ownerPathFrom(pathname), [pathname]);

  // Redirects are effects so that history entries stay right.
  const known = isAppPath(pathname);
  const redirect = !known ? null : !storage ? (pathname === '/login' ? null : `/login${segments || page || ownerPath ? `?next=${encodeURIComponent(pathname)}` : ''}`) : segments || page || ownerPath ? null : pathname === '/admin' || pathname === '/admin/' ? USERS_PATH : '/browse/';
  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  return (
    <AccountProvider client={client} user={storage ? user : null}>
    <ToastProvider>
      {!known ? (
        <NotFoundPage signedIn={!!storage} />
      ) : !storage ? (
        <LoginPage
          client={client}
          notice={notice}
          onSignedIn={() => {
            setNotice(null);
            setUser(client.username);
            const next = new URLSearchParams(location.search).get('next');
            navigate(next && (next.startsWith('/browse/') || next.startsWith(`${WITH_ME_PATH}/`) || PAGE_PATHS.includes(next)) ? next : '/browse/', { replace: true });
          }}
        />
      ) : page === SHARED_PATH ? (
        <SharedPage key={storage.user} storage={storage} />
      ) : page === WITH_ME_PATH ? (
        <WithMePage key={storage.user} storage={storage} />
      ) : ownerPath ? (
        <SharedFolder key={storage.user} account={storage} ownerPath={ownerPath} />
      ) : page === RECENT_PATH ? (
        <RecentPage key={storage.user} storage={storage} />
      ) : page === TRASH_PATH ? (
        <TrashPage key={storage.user} storage={storage} />
      ) : page === SETTINGS_PATH ? (
        <SettingsPage key={storage.user} storage={storage} />
      ) : page === USERS_PATH ? (
        <UsersPage key={storage.user} storage={storage} />
      ) : page === GROUPS_PATH ? (
        <GroupsPage key={storage.user} storage={storage} />
      ) : page === AUDIT_PATH ? (
        <AuditPage key={storage.user} storage={storage} />
      ) : segments ? (
        <Browser key={storage.user} storage={storage} segments={segments} />
      ) : null}
    </ToastProvider>
    </AccountProvider>
  );
}
