import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { AccountApi, type Me } from '../api/account';
import type { ApiClient } from '../api/client';
import { ApiError, networkError } from '../api/errors';

type Account = {
  /** `GET /api/me`, or null while loading (or when it failed: the app works without it, only the admin link waits). */
  readonly me: Me | null;
  /** Why /api/me could not be read, if it could not. */
  readonly error: ApiError | null;
  readonly api: AccountApi | null;
  /** Reads /api/me again (after turning TOTP on or off, say). */
  readonly reload: () => void;
};

const AccountContext = createContext<Account>({ me: null, error: null, api: null, reload: () => undefined });

/** Who is signed in, as the server sees them (admin or not, TOTP on or off), for the header and the account pages. */
export function AccountProvider({ client, user, children }: { client: ApiClient; user: string | null; children: ReactNode }) {
  const api = useMemo(() => (user ? new AccountApi(client) : null), [client, user]);
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  useEffect(() => {
    if (!api) return setMe(null);
    const ctl = new AbortController();
    setError(null);
    api.me(ctl.signal).then(
      (m) => setMe(m),
      (e: unknown) => {
        if (!ctl.signal.aborted) setError(e instanceof ApiError ? e : networkError());
      },
    );
    return () => ctl.abort();
  }, [api, generation]);
  const value = useMemo(() => ({ me: me && me.username === user ? me : null, error, api, reload }), [me, error, user, api, reload]);
  return <AccountContext.Provider value={value}>{children}</AccountContext.Provider>;
}

export const useAccount = (): Account => useContext(AccountContext);
