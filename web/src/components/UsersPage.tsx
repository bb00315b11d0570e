import { useCallback, useMemo, useState } from 'react';
import { AdminGroupsApi } from '../api/admin-groups';
import { AdminUsersApi, type User } from '../api/admin-users';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { plural } from '../lib/format';
import { useTitle } from '../lib/router';
import { AppHeader } from './AppHeader';
import { Banner, useBanner } from './Banner';
import { AdminOnlyState } from './AdminOnlyState';
import { ConfirmDialog } from './ConfirmDialog';
import { Skeleton } from './FolderStates';
import { Icon } from './icons';
import { useNotify } from './Toasts';
import { ToolButton } from './Toolbar';
import { CreateUserDialog, QuotaDialog, RemoveUserDialog, ResetPasswordDialog } from './UserDialogs';
import { UserItem, type UserAction } from './UserItem';
import { useAccount } from './useAccount';
import { useRemoteList } from './useRemoteList';

type Dialog = { kind: 'create' } | { kind: 'password' | 'quota' | 'disable' | 'remove'; user: User };

const byName = (a: User, b: User) => a.username.localeCompare(b.username);

/** For admins: every account and the groups it is in, with create, reset password, admin rights, quota, disable / enable and remove. */
export function UsersPage({ storage }: { storage: StorageApi }) {
  const banner = useBanner('page', storage.client, 'users');
  const api = useMemo(() => new AdminUsersApi(storage.client), [storage]);
  const load = useCallback((signal: AbortSignal) => api.list(signal).then((users) => [...users].sort(byName)), [api]);
  const { state, reload, drop } = useRemoteList(load);
  // Each user's groups, read with the users (a failure leaves them out; the users still show).
  const groupsApi = useMemo(() => new AdminGroupsApi(storage.client), [storage]);
  const loadGroups = useCallback((signal: AbortSignal) => groupsApi.list(signal).catch(() => []), [groupsApi]);
  const groups = useRemoteList(loadGroups);
  const groupsOf = useMemo(() => {
    const of = new Map<string, string[]>();
    if (groups.state.status === 'ready') for (const g of groups.state.items) for (const m of g.members) of.set(m, [...(of.get(m) ?? []), g.name]);
    return of;
  }, [groups.state]);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const notify = useNotify();
  const account = useAccount();
  useTitle('Users');

  /** Changes one user on the server, then shows it (the list is read again, so it shows what the server holds). */
  const change = useCallback(
    async (user: User, patch: Parameters<AdminUsersApi['update']>[1], done: string) => {
      try {
        await api.update(user.username, patch);
        notify(done);
        if (user.username === storage.user) account.reload();
      } catch (e) {
        notify(messageOf(e), 'error');
      }
      reload();
    },
    [api, notify, reload, storage.user, account],
  );

  const act = (user: User, a: UserAction) => {
    if (a === 'admin') void change(user, { admin: !user.admin }, user.admin ? `${user.username} is no longer an admin.` : `${user.username} is now an admin.`);
    else if (a === 'enable') void change(user, { disabled: false }, `${user.username} can sign in again.`);
    else setDialog({ kind: a, user });
  };

  const forbidden = state.status === 'error' && state.error.status === 403;
  const taken = (name: string) => state.status === 'ready' && state.items.some((u) => u.username === name);

  return (
    <div className="app">
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} />
      <main className="browser users-page" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          <h1 className="page-title">Users</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label="User actions">
            <ToolButton icon="retry" label="Refresh" onClick={reload} />
            {!forbidden ? <ToolButton icon="userPlus" label="New user" primary onClick={() => setDialog({ kind: 'create' })} /> : null}
          </div>
        </div>
        {state.status === 'loading' ? (
          <Skeleton label="Loading users" />
        ) : state.status === 'error' ? (
          <AdminOnlyState error={state.error} what="users" forbiddenTitle="Only administrators can manage users" forbiddenText="Ask an administrator if you need an account changed." onRetry={reload} />
        ) : (
          <>
            <ul className="item-list user-list" aria-label="Users">
              {state.items.map((u) => (
                <UserItem key={u.username} user={u} self={u.username === storage.user} groups={groupsOf.get(u.username)} onAction={(a) => act(u, a)} />
              ))}
            </ul>
            {state.items.length <= 1 ? (
              <div className="section-state empty only-user">
                <span className="kind-icon kind-folder">
                  <Icon name="users" size={32} />
                </span>
                <div>
                  <p className="section-state-title">You are the only user</p>
                  <p className="muted small">Make an account for each person, so everyone has their own files, password and share links.</p>
                </div>
                <button type="button" className="button primary small" onClick={() => setDialog({ kind: 'create' })}>
                  <Icon name="userPlus" size={16} /> New user
                </button>
              </div>
            ) : null}
            <div className="status-line muted">
              {plural(state.items.length, 'user')}, {plural(state.items.filter((u) => u.admin).length, 'admin')}
              {state.items.some((u) => u.disabled) ? `, ${state.items.filter((u) => u.disabled).length} disabled` : ''}
            </div>
          </>
        )}
      </main>
      {dialog?.kind === 'create' ? (
        <CreateUserDialog
          api={api}
          taken={taken}
          onCreated={(name) => {
            notify(`${name} can now sign in.`);
            reload();
          }}
          onClose={() => setDialog(null)}
        />
      ) : dialog?.kind === 'password' ? (
        <ResetPasswordDialog api={api} user={dialog.user} onDone={() => notify(`The password of ${dialog.user.username} was changed.`)} onClose={() => setDialog(null)} />
      ) : dialog?.kind === 'quota' ? (
        <QuotaDialog
          api={api}
          user={dialog.user}
          onDone={(q) => {
            notify(q === null ? `${dialog.user.username} has no quota now.` : `The quota of ${dialog.user.username} was set.`);
            reload();
          }}
          onClose={() => setDialog(null)}
        />
      ) : dialog?.kind === 'disable' ? (
        <ConfirmDialog
          title={`Disable “${dialog.user.username}”?`}
          warning={`${dialog.user.username} is signed out at once and cannot sign in; their app passwords and share links stop working until you enable the account again. Their files stay.`}
          label="Disable user"
          busyLabel="Disabling…"
          onConfirm={async () => {
            await api.update(dialog.user.username, { disabled: true });
            notify(`${dialog.user.username} is disabled.`);
            reload();
          }}
          onClose={() => setDialog(null)}
        />
      ) : dialog?.kind === 'remove' ? (
        <RemoveUserDialog
          api={api}
          user={dialog.user}
          onDone={(deleted) => {
            drop((u) => u.username !== dialog.user.username);
            notify(deleted ? `${dialog.user.username} and their files were removed.` : `${dialog.user.username} was removed; their files were kept.`);
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </div>
  );
}
