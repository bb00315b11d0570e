import { useEffect, useMemo, useState } from 'react';
import type { ApiClient } from './api/client';
import { segmentsFromBrowsePath } from './api/paths';
import { StorageApi } from './api/storage';
import { Browser } from './components/Browser';
import { LoginPage } from './components/LoginPage';
import { SharedPage } from './components/SharedPage';
import { NotFoundPage } from './components/NotFoundPage';
import { ToastProvider } from './components/Toasts';
import { isAppPath, navigate, SHARED_PATH, useLocation } from './lib/router';
import { stripBase } from './lib/base';

/** Routes: /login, /browse/<percent-encoded path>/ for the signed-in user's folders, /shared for their share links. */
export function App({ client }: { client: ApiClient }) {
  const pathname = useLocation();
  const [user, setUser] = useState<string | null>(client.username);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(
    () =>
      client.onSessionEnd((why) => {
        setUser(null);
        setNotice(why === 'expired' ? 'Your session has ended. Sign in again.' : null);
        const here = stripBase(location.pathname);
        const back = (here.startsWith('/browse') || here === SHARED_PATH) && why === 'expired' ? `?next=${encodeURIComponent(here)}` : '';
        navigate(`/login${back}`, { replace: true });
      }),
    [client],
  );

  const storage = useMemo(() => (user ? new StorageApi(client, user) : null), [client, user]);
  const segments = useMemo(() => segmentsFromBrowsePath(pathname), [pathname]);
  const shared = pathname === SHARED_PATH;

  // Redirects are effects so that history entries stay right.
  const known = isAppPath(pathname);
  const redirect = !known ? null : !storage ? (pathname === '/login' ? null : `/login${segments || shared ? `?next=${encodeURIComponent(pathname)}` : ''}`) : segments || shared ? null : '/browse/';
  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  return (
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
            navigate(next && (next.startsWith('/browse/') || next === SHARED_PATH) ? next : '/browse/', { replace: true });
          }}
        />
      ) : shared ? (
        <SharedPage key={storage.user} storage={storage} />
      ) : segments ? (
        <Browser key={storage.user} storage={storage} segments={segments} />
      ) : null}
    </ToastProvider>
  );
}
