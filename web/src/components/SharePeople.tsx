import { useCallback, useEffect, useMemo, useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';
import { GrantsApi, type Grant, type Permission } from '../api/grants';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';

const LABELS: Record<Permission, string> = { read: 'Can view', write: 'Can edit' };

/** "Share with people": the accounts and groups an item is shared with, and adding, changing and removing them. */
export function SharePeople({ storage, path }: { storage: StorageApi; path: Segments }) {
  const grants = useMemo(() => new GrantsApi(storage.client, storage.user), [storage]);
  const [list, setList] = useState<Grant[] | null>(null);
  const [to, setTo] = useState('');
  const [permission, setPermission] = useState<Permission>('read');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setList(await grants.of(path));
    } catch (err) {
      setError(messageOf(err));
    }
  }, [grants, path]);
  useEffect(() => void load(), [load]);

  async function run(action: () => Promise<unknown>) {
    setBusy(true);
    setError(null);
    try {
      await action();
      await load();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function add(e: FormEvent) {
    e.preventDefault();
    const name = to.trim();
    if (!name) return setError('Enter a username, or group:<name> for a group.');
    await run(async () => {
      await grants.create(path, name, permission);
      setTo('');
    });
  }

  return (
    <section className="stack share-people" aria-labelledby="share-people-title">
      <h3 id="share-people-title">Share with people</h3>
      <p>People you share with open it with their own account, in their “Shared with me” WebDAV folder or at your path.</p>
      <form className="share-fields" onSubmit={add}>
        <label className="field">
          <span>Username or group:name</span>
          <input value={to} onChange={(e) => setTo(e.target.value)} autoComplete="off" />
        </label>
        <label className="field">
          <span>Permission</span>
          <select aria-label="Permission" value={permission} onChange={(e) => setPermission(e.target.value as Permission)}>
            <option value="read">{LABELS.read}</option>
            <option value="write">{LABELS.write}</option>
          </select>
        </label>
        <button type="submit" className="button" disabled={busy}>
          Share
        </button>
      </form>
      {error ? <p role="alert">{error}</p> : null}
      {list === null ? null : list.length === 0 ? (
        <p>Not shared with anyone yet.</p>
      ) : (
        <ul aria-label="Shared with" className="stack">
          {list.map((g) => (
            <li key={g.id} className="share-person">
              <span>{g.to.replace(/^user:/, '')}</span>
              <select aria-label={`Permission of ${g.to}`} value={g.permission} disabled={busy} onChange={(e) => void run(() => grants.setPermission(g.id, e.target.value as Permission))}>
                <option value="read">{LABELS.read}</option>
                <option value="write">{LABELS.write}</option>
              </select>
              <button type="button" className="button" disabled={busy} onClick={() => void run(() => grants.remove(g.id))}>
                Stop sharing with {g.to.replace(/^user:/, '')}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
