import { useEffect, useRef, useState, type FormEvent } from 'react';
import { SIGNED_OUT_KEY, type ApiClient } from '../api/client';
import { ApiError, formatWait, messageOf } from '../api/errors';
import { cleanCode } from '../lib/account-rules';
import { BASE, withBase } from '../lib/base';
import { useTitle } from '../lib/router';
import { Icon, Logo } from './icons';
import { Banner, useBanner } from './Banner';
import { t } from '../lib/i18n';
import { localizePart } from '../../../src/lib/i18n/sentences';

/**
 * Sign in. Wrong password, throttling (with a live countdown) and an
 * unreachable server each get their own sentence. An account with two-step
 * verification gets a second step: the server answers 401 `totp_required`,
 * and the password (kept in this component's state only) is sent again with
 * the code from the app or a recovery code.
 */
type SsoStatus = { enabled: boolean; label?: string; only?: boolean; available?: boolean; problem?: string | null };

/**
 * Single sign-on (GET /auth/oidc/status): the button, and with --oidc-only the redirect to the
 * provider; the callback comes back to /login#sso=<one-time code>, exchanged here for a session.
 */
function useSso(client: ApiClient, onSignedIn: () => void, setError: (e: string | null) => void) {
  const [status, setStatus] = useState<SsoStatus | null>(null);
  const code = useRef(location.hash.startsWith('#sso=') ? decodeURIComponent(location.hash.slice(5)) : null);
  const [finishing, setFinishing] = useState(code.current !== null);
  useEffect(() => {
    const c = code.current;
    if (c === null) return;
    code.current = null;
    // The code is good once: out of the address bar and history at once.
    history.replaceState(history.state, '', location.pathname + location.search);
    client.loginWithCode(c).then(onSignedIn, (err: unknown) => {
      setFinishing(false);
      setError(messageOf(err));
    });
  }, [client, onSignedIn, setError]);
  useEffect(() => {
    let live = true;
    fetch(withBase('/auth/oidc/status'), { cache: 'no-store' })
      .then((r) => (r.ok ? (r.json() as Promise<SsoStatus>) : null))
      .then((s) => {
        if (!live || !s?.enabled) return;
        setStatus(s);
        const params = new URLSearchParams(location.search);
        const signedOut = sessionStorage.getItem(SIGNED_OUT_KEY) !== null;
        sessionStorage.removeItem(SIGNED_OUT_KEY);
        if (s.only && s.available && !finishing && !params.has('local') && !params.has('sso_failed') && !signedOut) location.assign(withBase('/auth/oidc/login'));
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
    // Once per page: a failed exchange must not send the browser away again.
  }, []);
  return { status, finishing };
}

export function LoginPage({ client, notice, onSignedIn }: { client: ApiClient; notice: string | null; onSignedIn: () => void }) {
  useTitle(t('login.title'));
  const banner = useBanner('login');
  const [username, setUsername] = useState(client.username ?? client.lastUsername ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [waitUntil, setWaitUntil] = useState(0);
  const [now, setNow] = useState(Date.now());
  const [showPassword, setShowPassword] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);
  const [totpStep, setTotpStep] = useState(false);
  const [code, setCode] = useState('');
  const codeRef = useRef<HTMLInputElement>(null);
  const sso = useSso(client, onSignedIn, setError);
  const [showLocal, setShowLocal] = useState(() => new URLSearchParams(location.search).has('local'));

  const waiting = waitUntil > now;
  useEffect(() => {
    if (!waiting) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [waiting]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy || waiting) return;
    if (!username.trim() || !password) {
      setError(!username.trim() ? t('login.enterUsername') : t('login.enterPassword'));
      return;
    }
    const totp = totpStep ? cleanCode(code) : undefined;
    if (totpStep && !totp) {
      setError(t('login.enterCode'));
      return codeRef.current?.focus();
    }
    setBusy(true);
    setError(null);
    try {
      await client.login(username.trim(), password, totp);
      setPassword('');
      setCode('');
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'totp_required') {
        setTotpStep(true);
        setCode('');
      } else if (totpStep && err instanceof ApiError && err.code === 'invalid_credentials') {
        setError(t('login.wrongCode'));
        setCode('');
        codeRef.current?.focus();
      } else if (err instanceof ApiError && err.status === 429) {
        const secs = err.retryAfter ?? 60;
        setWaitUntil(Date.now() + secs * 1000);
        setNow(Date.now());
        setError(null);
      } else if (err instanceof ApiError && err.code === 'invalid_credentials') {
        setError(t('login.wrong'));
        setPassword('');
        passwordRef.current?.focus();
      } else {
        setError(messageOf(err));
      }
    } finally {
      setBusy(false);
    }
  }

  const remaining = Math.max(0, Math.ceil((waitUntil - now) / 1000));
  const shown = waiting ? t('login.throttled', { wait: formatWait(remaining) }) : error;

  const alert = (
    <p className="form-error" role="alert" aria-live="assertive">
      {shown ? (
        <>
          <Icon name="alert" size={18} />
          <span>{shown}</span>
        </>
      ) : null}
    </p>
  );

  if (totpStep) {
    return (
      <main className="login-page">
        <Banner kind="login" text={banner} />
        <form className="login-card" onSubmit={submit} noValidate aria-labelledby="login-title">
          <div className="login-brand">
            <Logo size={40} />
            <span>File Cloud</span>
          </div>
          <h1 id="login-title">{t('login.twoStep')}</h1>
          <p className="muted login-hint">
            Enter the code from your authenticator app for <strong>{username.trim()}</strong>. Lost your phone? Enter one of your recovery codes instead.
          </p>
          <label className="field">
            <span>{t('login.code')}</span>
            <input ref={codeRef} name="totp" className="code-input" autoComplete="one-time-code" inputMode="numeric" autoFocus spellCheck={false} autoCapitalize="none" maxLength={64} value={code} onChange={(e) => setCode(e.target.value)} aria-invalid={error ? true : undefined} />
          </label>
          {alert}
          <button type="submit" className="button primary block" disabled={busy || waiting}>
            {busy ? t('login.checking') : t('login.verify')}
          </button>
          <button
            type="button"
            className="button ghost block"
            onClick={() => {
              setTotpStep(false);
              setPassword('');
              setCode('');
              setError(null);
            }}
          >
            {t('login.back')}
          </button>
        </form>
      </main>
    );
  }

  return (
    <main className="login-page">
      <Banner kind="login" text={banner} />
      <form className="login-card" onSubmit={submit} noValidate aria-labelledby="login-title">
        <div className="login-brand">
          <Logo size={40} />
          <span>File Cloud</span>
        </div>
        <h1 id="login-title">{t('login.title')}</h1>
        {notice && !shown ? <p className="login-notice">{notice}</p> : null}
        {sso.status ? (
          <>
            <button type="button" className="button primary block" disabled={sso.finishing} onClick={() => location.assign(withBase('/auth/oidc/login'))}>
              {sso.finishing ? t('login.signingIn') : t('login.signInWith', { provider: sso.status.label ?? t('login.sso') })}
            </button>
            {sso.status.available === false ? <p className="muted login-hint">{t('login.ssoUnavailable', { problem: localizePart(sso.status.problem ?? '', t) })}</p> : null}
            {sso.status.only && !showLocal ? (
              <>
                {alert}
                <button type="button" className="button ghost block" onClick={() => setShowLocal(true)}>
                  {t('login.local')}
                </button>
              </>
            ) : (
              <p className="muted login-hint" style={{ textAlign: 'center' }}>{t('login.orPassword')}</p>
            )}
          </>
        ) : null}
        {sso.status?.only && !showLocal ? null : (
        <>
        <label className="field">
          <span>{t('login.username')}</span>
          <input name="username" autoComplete="username" autoCapitalize="none" spellCheck={false} autoFocus={!username} value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label className="field">
          <span>{t('login.password')}</span>
          <span className="password-wrap">
            <input
              ref={passwordRef}
              name="password"
              type={showPassword ? 'text' : 'password'}
              autoComplete="current-password"
              autoFocus={!!username}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={error === t('login.wrong') ? true : undefined}
            />
            <button type="button" className="icon-button small reveal" aria-label={showPassword ? t('login.hidePassword') : t('login.showPassword')} aria-pressed={showPassword} onClick={() => setShowPassword((s) => !s)}>
              <Icon name="eye" size={18} />
            </button>
          </span>
        </label>
        {alert}
        <button type="submit" className={`button ${sso.status ? '' : 'primary '}block`} disabled={busy || waiting}>
          {busy ? t('login.signingIn') : t('login.title')}
        </button>
        </>
        )}
      </form>
      <p style={{ textAlign: 'center', fontSize: '0.875rem' }}><a href={`${BASE}/basic/`}>{t('login.basic')}</a> {t('login.basicHint')}</p>
    </main>
  );
}
