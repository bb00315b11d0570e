import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { ApiClient } from '../api/client';
import { ApiError, formatWait, messageOf } from '../api/errors';
import { BASE } from '../lib/base';
import { useTitle } from '../lib/router';
import { Icon, Logo } from './icons';
import { Banner, useBanner } from './Banner';

/** Sign in. Wrong password, throttling (with a live countdown) and an unreachable server each get their own sentence. */
export function LoginPage({ client, notice, onSignedIn }: { client: ApiClient; notice: string | null; onSignedIn: () => void }) {
  useTitle('Sign in');
  const banner = useBanner('login');
  const [username, setUsername] = useState(client.username ?? client.lastUsername ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [waitUntil, setWaitUntil] = useState(0);
  const [now, setNow] = useState(Date.now());
  const [showPassword, setShowPassword] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);

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
      setError(!username.trim() ? 'Enter your username.' : 'Enter your password.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await client.login(username.trim(), password);
      setPassword('');
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        const secs = err.retryAfter ?? 60;
        setWaitUntil(Date.now() + secs * 1000);
        setNow(Date.now());
        setError(null);
      } else if (err instanceof ApiError && err.code === 'invalid_credentials') {
        setError('Wrong username or password.');
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
  const shown = waiting ? `Too many sign-in attempts. Try again in ${formatWait(remaining)}.` : error;

  return (
    <main className="login-page">
      <Banner kind="login" text={banner} />
      <form className="login-card" onSubmit={submit} noValidate aria-labelledby="login-title">
        <div className="login-brand">
          <Logo size={40} />
          <span>File Cloud</span>
        </div>
        <h1 id="login-title">Sign in</h1>
        {notice && !shown ? <p className="login-notice">{notice}</p> : null}
        <label className="field">
          <span>Username</span>
          <input name="username" autoComplete="username" autoCapitalize="none" spellCheck={false} autoFocus={!username} value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <span className="password-wrap">
            <input
              ref={passwordRef}
              name="password"
              type={showPassword ? 'text' : 'password'}
              autoComplete="current-password"
              autoFocus={!!username}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={error?.startsWith('Wrong') ? true : undefined}
            />
            <button type="button" className="icon-button small reveal" aria-label={showPassword ? 'Hide password' : 'Show password'} aria-pressed={showPassword} onClick={() => setShowPassword((s) => !s)}>
              <Icon name="eye" size={18} />
            </button>
          </span>
        </label>
        <p className="form-error" role="alert" aria-live="assertive">
          {shown ? (
            <>
              <Icon name="alert" size={18} />
              <span>{shown}</span>
            </>
          ) : null}
        </p>
        <button type="submit" className="button primary block" disabled={busy || waiting}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p style={{ textAlign: 'center', fontSize: '0.875rem' }}><a href={`${BASE}/basic/`}>Basic HTML version</a> (no JavaScript, for old or text browsers)</p>
    </main>
  );
}
