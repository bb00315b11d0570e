import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { AdminGroupsApi, memberNames, type Group } from '../api/admin-groups';
import { AdminUsersApi } from '../api/admin-users';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { t } from '../lib/i18n';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { AdminOnlyState } from './AdminOnlyState';
import { ConfirmDialog } from './ConfirmDialog';
import { FormActions } from './FormActions';
import { Dialog } from './Dialog';
import { Skeleton } from './FolderStates';
import { Icon } from './icons';
import { useNotify } from './Toasts';
import { ToolButton } from './Toolbar';
import { useRemoteList } from './useRemoteList';

/** For admins: every group with its members; create, add and remove members, remove a group (GET/POST/PATCH/DELETE /api/admin/groups). */
export function GroupsPage({ storage }: { storage: StorageApi }) {
  const api = useMemo(() => new AdminGroupsApi(storage.client), [storage]);
  const load = useCallback((signal: AbortSignal) => api.list(signal), [api]);
  const { state, reload } = useRemoteList(load);
  // The accounts: suggested as members, and a name that is none is refused here, before the server would.
  const usersApi = useMemo(() => new AdminUsersApi(storage.client), [storage]);
  const loadUsers = useCallback((signal: AbortSignal) => usersApi.list(signal).then((us) => us.map((u) => u.username).sort()).catch(() => [] as string[]), [usersApi]);
  const users = useRemoteList(loadUsers);
  const known = users.state.status === 'ready' && users.state.items.length ? users.state.items : undefined;
  const unknown = useCallback((names: string[]) => (known ? names.filter((n) => !known.includes(n)) : []), [known]);
  const [creating, setCreating] = useState(false);
  const [removing, setRemoving] = useState<Group | null>(null);
  const notify = useNotify();
  useTitle(t('nav.groups'));
  const forbidden = state.status === 'error' && state.error.status === 403;

  return (
    <div className="app">
      <AppHeader storage={storage} />
      <main className="browser users-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">{t('nav.groups')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('groups.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
            {!forbidden ? <ToolButton icon="plus" label={t('groups.new')} primary onClick={() => setCreating(true)} /> : null}
          </div>
        </div>
        {state.status === 'loading' ? (
          <Skeleton label={t('groups.loading')} />
        ) : state.status === 'error' ? (
          <AdminOnlyState error={state.error} failed={t('groups.failed')} forbiddenTitle={t('groups.forbidden')} forbiddenText={t('groups.forbiddenText')} onRetry={reload} />
        ) : (
          <>
            {state.items.length ? (
              <ul className="item-list group-list" aria-label={t('nav.groups')}>
                {state.items.map((g) => (
                  <GroupItem key={g.name} api={api} group={g} unknown={unknown} onChanged={reload} onRemove={() => setRemoving(g)} />
                ))}
              </ul>
            ) : (
              <p className="muted">{t('groups.none')}</p>
            )}
            <div className="status-line muted">{t('groups.count', { count: state.items.length })}</div>
          </>
        )}
        <datalist id="group-user-names">
          {users.state.status === 'ready' ? users.state.items.map((u) => <option key={u} value={u} />) : null}
        </datalist>
      </main>
      {creating ? (
        <CreateGroupDialog
          api={api}
          unknown={unknown}
          onCreated={(g) => {
            notify(t('groups.created', { name: g.name }));
            reload();
          }}
          onClose={() => setCreating(false)}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={t('groups.removeTitle', { name: removing.name })}
          warning={t('groups.removeWarning')}
          label={t('groups.remove')}
          busyLabel={t('ssh.removing')}
          onConfirm={async () => {
            await api.remove(removing.name);
            notify(t('groups.removed', { name: removing.name }));
            reload();
          }}
          onClose={() => setRemoving(null)}
        />
      ) : null}
    </div>
  );
}

const noSuchUser = (names: string[]) => t('groups.noSuchUser', { count: names.length, names: names.join('”, “') });

/** One group: its members, each removable, and a field to add more. */
function GroupItem({ api, group, unknown, onChanged, onRemove }: { api: AdminGroupsApi; group: Group; unknown: (names: string[]) => string[]; onChanged: () => void; onRemove: () => void }) {
  const [adding, setAdding] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const change = async (c: { add?: string[]; remove?: string[] }) => {
    setBusy(true);
    setError(null);
    try {
      await api.change(group.name, c);
      setAdding('');
      onChanged();
    } catch (e) {
      setError(messageOf(e));
    }
    setBusy(false);
  };
  const add = (e: FormEvent) => {
    e.preventDefault();
    const names = memberNames(adding);
    const strangers = unknown(names);
    if (strangers.length) return setError(noSuchUser(strangers));
    if (names.length) void change({ add: names });
  };
  const errorId = `group-error-${group.name}`;
  return (
    <li className="list-item group-item" data-name={group.name}>
      <span className="avatar avatar-large" aria-hidden="true">
        <Icon name="users" size={22} />
      </span>
      <div className="item-main">
        <div className="item-title">
          <span className="item-name">{group.name}</span>
          <span className="muted small">{t('groups.members', { count: group.members.length })}</span>
        </div>
        <ul className="member-list" aria-label={t('groups.membersOf', { name: group.name })}>
          {group.members.map((m) => (
            <li key={m} className="member">
              <span>{m}</span>
              <button type="button" className="icon-button small" aria-label={t('groups.removeFrom', { member: m, name: group.name })} title={t('groups.removeMember', { member: m })} disabled={busy} onClick={() => void change({ remove: [m] })}>
                <Icon name="close" size={14} />
              </button>
            </li>
          ))}
        </ul>
        <form className="member-add" onSubmit={add}>
          <input aria-label={t('groups.addTo', { name: group.name })} list="group-user-names" placeholder={t('login.username')} value={adding} onChange={(e) => setAdding(e.target.value)} aria-describedby={errorId} aria-invalid={error ? true : undefined} autoComplete="off" spellCheck={false} />
          <button type="submit" className="button small" disabled={busy || !adding.trim()}>
            {t('groups.add')}
          </button>
        </form>
        <p id={errorId} className="form-error" role="alert">
          {error}
        </p>
      </div>
      <button type="button" className="button small danger" aria-label={t('groups.removeGroup', { name: group.name })} onClick={onRemove}>
        {t('ssh.removeShort')}
      </button>
    </li>
  );
}

/** A new group: its name and, optionally, its first members (names separated by commas or spaces). */
function CreateGroupDialog({ api, unknown, onCreated, onClose }: { api: AdminGroupsApi; unknown: (names: string[]) => string[]; onCreated: (g: Group) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [members, setMembers] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return setError(t('groups.nameMissing'));
    const strangers = unknown(memberNames(members));
    if (strangers.length) return setError(noSuchUser(strangers));
    setBusy(true);
    setError(null);
    try {
      onCreated(await api.create(name.trim(), memberNames(members)));
      onClose();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('groups.new')} onClose={onClose}>
      <form onSubmit={submit} className="stack">
        <label className="field">
          <span>{t('appKey.name')}</span>
          <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" spellCheck={false} aria-describedby="group-create-error" />
        </label>
        <label className="field">
          <span>{t('groups.membersLabel')}</span>
          <input value={members} onChange={(e) => setMembers(e.target.value)} placeholder="bea, carl" autoComplete="off" spellCheck={false} aria-describedby="group-create-error" />
        </label>
        <FormActions errorId="group-create-error" error={error} busy={busy} label={t('groups.create')} busyLabel={t('appKey.creating')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
