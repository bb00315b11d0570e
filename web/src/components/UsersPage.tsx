import { useCallback, useMemo, useState } from 'react';
import { AdminGroupsApi } from '../api/admin-groups';
import { AdminUsersApi, type User } from '../api/admin-users';
import { messageOf } from '../api/errors';
import type { StorageApi } from '../api/storage';
import { t } from '../lib/i18n';
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
  useTitle(t('nav.users'));

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
    const name = user.username;
    if (a === 'admin') void change(user, { admin: !user.admin }, user.admin ? t('users.noLongerAdmin', { name }) : t('users.nowAdmin', { name }));
    else if (a === 'enable') void change(user, { disabled: false }, t('users.enabled', { name }));
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
          <h1 className="page-title">{t('nav.users')}</h1>
          <span className="spacer" />
          <div className="toolbar-actions" role="toolbar" aria-label={t('users.actions')}>
            <ToolButton icon="retry" label={t('sessions.refreshShort')} onClick={reload} />
            {!forbidden ? <ToolButton icon="userPlus" label={t('users.new')} primary onClick={() => setDialog({ kind: 'create' })} /> : null}
          </div>
        </div>
        {state.status === 'loading' ? (
          <Skeleton label={t('users.loading')} />
        ) : state.status === 'error' ? (
          <AdminOnlyState error={state.error} failed={t('users.failed')} forbiddenTitle={t('users.forbidden')} forbiddenText={t('users.forbiddenText')} onRetry={reload} />
        ) : (
          <>
            <ul className="item-list user-list" aria-label={t('nav.users')}>
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
                  <p className="section-state-title">{t('users.onlyYou')}</p>
                  <p className="muted small">{t('users.onlyYouText')}</p>
                </div>
                <button type="button" className="button primary small" onClick={() => setDialog({ kind: 'create' })}>
                  <Icon name="userPlus" size={16} /> {t('users.new')}
                </button>
              </div>
            ) : null}
            <div className="status-line muted">
              {t('users.count', { users: state.items.length, admins: state.items.filter((u) => u.admin).length, disabled: state.items.filter((u) => u.disabled).length })}
            </div>
          </>
        )}
      </main>
      {dialog?.kind === 'create' ? (
        <CreateUserDialog
          api={api}
          taken={taken}
          onCreated={(name) => {
            notify(t('users.created', { name }));
            reload();
          }}
          onClose={() => setDialog(null)}
        />
      ) : dialog?.kind === 'password' ? (
        <ResetPasswordDialog api={api} user={dialog.user} onDone={() => notify(t('users.passwordChanged', { name: dialog.user.username }))} onClose={() => setDialog(null)} />
      ) : dialog?.kind === 'quota' ? (
        <QuotaDialog
          api={api}
          user={dialog.user}
          onDone={(q) => {
            notify(q === null ? t('users.quotaRemoved', { name: dialog.user.username }) : t('users.quotaSet', { name: dialog.user.username }));
            reload();
          }}
          onClose={() => setDialog(null)}
        />
      ) : dialog?.kind === 'disable' ? (
        <ConfirmDialog
          title={t('users.disableTitle', { name: dialog.user.username })}
          warning={t('users.disableWarning', { name: dialog.user.username })}
          label={t('users.disable')}
          busyLabel={t('users.disabling')}
          onConfirm={async () => {
            await api.update(dialog.user.username, { disabled: true });
            notify(t('users.disabled', { name: dialog.user.username }));
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
            notify(deleted ? t('users.removedWithFiles', { name: dialog.user.username }) : t('users.removedKeptFiles', { name: dialog.user.username }));
          }}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </div>
  );
}
