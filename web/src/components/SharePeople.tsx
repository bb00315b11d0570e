import { useCallback, useEffect, useMemo, useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';
import { GrantsApi, type Grant, type Permission } from '../api/grants';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { recipientOf, recipientTo, suggestRecipients, type Recipient } from '../lib/recipients';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';

const permissionLabel = (p: Permission): string => t(p === 'read' ? 'people.canView' : 'people.canEdit');

/** "Share with people": the accounts and groups an item is shared with, and adding, changing and removing them. */
export function SharePeople({ storage, path }: { storage: StorageApi; path: Segments }) {
  const grants = useMemo(() => new GrantsApi(storage.client, storage.user), [storage]);
  const [list, setList] = useState<Grant[] | null>(null);
  const [to, setTo] = useState('');
  const [permission, setPermission] = useState<Permission>('read');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [known, setKnown] = useState<Recipient[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const myGroups = useAccount().me?.groups;

  // Whom the user already knows: their groups, whom they shared with, who shared with them.
  useEffect(() => {
    const ctl = new AbortController();
    Promise.all([grants.given(ctl.signal).catch(() => []), grants.received(ctl.signal).catch(() => [])]).then(([given, received]) => {
      if (ctl.signal.aborted) return;
      const names: Recipient[] = [...(myGroups ?? []).map((name) => ({ kind: 'group' as const, name }))];
      for (const g of given) {
        const r = recipientOf(g.to);
        if (r) names.push(r);
      }
      for (const g of received) names.push({ kind: 'user', name: g.owner });
      setKnown(names.filter((r) => !(r.kind === 'user' && r.name === storage.user)));
    });
    return () => ctl.abort();
  }, [grants, myGroups, storage.user]);
  const already = useMemo(() => new Set((list ?? []).map((g) => g.to)), [list]);
  const suggestions = open ? suggestRecipients(to, known, already) : [];
  const pick = (r: Recipient) => {
    setTo(recipientTo(r));
    setOpen(false);
    setActive(-1);
  };

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
    if (!name) return setError(t('people.enterName'));
    setOpen(false);
    await run(async () => {
      await grants.create(path, name, permission);
      setTo('');
    });
  }

  return (
    <section className="stack share-people" aria-labelledby="share-people-title">
      <h3 id="share-people-title">{t('people.title')}</h3>
      <p>{t('people.about')}</p>
      <form className="share-fields" onSubmit={add}>
        <div className="field recipient-field">
          <label htmlFor="share-recipient">{t('people.who')}</label>
          <input
            id="share-recipient"
            role="combobox"
            aria-autocomplete="list"
            aria-expanded={suggestions.length > 0}
            aria-controls="share-recipient-suggestions"
            aria-activedescendant={active >= 0 && suggestions[active] ? `share-suggestion-${active}` : undefined}
            placeholder={t('people.placeholder')}
            value={to}
            onChange={(e) => {
              setTo(e.target.value);
              setOpen(true);
              setActive(-1);
            }}
            onFocus={() => setOpen(true)}
            onBlur={() => setOpen(false)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                e.preventDefault();
                setOpen(true);
                const n = suggestions.length;
                if (n) setActive((a) => (e.key === 'ArrowDown' ? (a + 1) % n : (a - 1 + n) % n));
              } else if (e.key === 'Enter' && active >= 0 && suggestions[active]) {
                e.preventDefault();
                pick(suggestions[active]);
              } else if (e.key === 'Escape' && suggestions.length) {
                // Closes the suggestions, not the dialog.
                e.preventDefault();
                e.stopPropagation();
                setOpen(false);
              }
            }}
            autoComplete="off"
          />
          {suggestions.length ? (
            <ul id="share-recipient-suggestions" role="listbox" aria-label={t('people.suggestions')} className="recipient-suggestions">
              {suggestions.map((r, i) => (
                <li
                  key={recipientTo(r)}
                  id={`share-suggestion-${i}`}
                  role="option"
                  aria-selected={i === active}
                  // Before the input's blur closes the list.
                  onMouseDown={(e) => {
                    e.preventDefault();
                    pick(r);
                  }}
                >
                  <span>{r.name}</span>
                  <span className="muted small">{r.kind === 'group' ? t('people.group') : t('people.person')}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
        <label className="field">
          <span>{t('people.permission')}</span>
          <select aria-label={t('people.permission')} value={permission} onChange={(e) => setPermission(e.target.value as Permission)}>
            <option value="read">{permissionLabel('read')}</option>
            <option value="write">{permissionLabel('write')}</option>
          </select>
        </label>
        <button type="submit" className="button" disabled={busy}>
          {t('action.share')}
        </button>
      </form>
      {error ? <p role="alert">{error}</p> : null}
      {list === null ? null : list.length === 0 ? (
        <p>{t('people.none')}</p>
      ) : (
        <ul aria-label={t('people.sharedWith')} className="stack">
          {list.map((g) => (
            <li key={g.id} className="share-person">
              <span>{g.to.startsWith('group:') ? t('people.groupName', { name: g.to.slice(6) }) : g.to.replace(/^user:/, '')}</span>
              <select aria-label={t('people.permissionOf', { to: g.to })} value={g.permission} disabled={busy} onChange={(e) => void run(() => grants.setPermission(g.id, e.target.value as Permission))}>
                <option value="read">{permissionLabel('read')}</option>
                <option value="write">{permissionLabel('write')}</option>
              </select>
              <button type="button" className="button" disabled={busy} onClick={() => void run(() => grants.remove(g.id))}>
                {t('people.stop', { name: g.to.replace(/^user:/, '') })}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
