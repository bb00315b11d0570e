import type { User } from '../api/admin-users';
import { formatSize } from '../lib/format';
import { Icon } from './icons';
import { Menu, useMenuAnchor, type MenuItem } from './Menu';

export type UserAction = 'password' | 'admin' | 'quota' | 'disable' | 'enable' | 'remove';

/** How full a user's quota is, 0…1, or null without a quota. */
const fill = (u: User) => (u.quota === null ? null : u.quota === 0 ? 1 : Math.min(1, u.used / u.quota));

/** One account in the Users list: name, role, state, the groups it is in, usage against quota, and an actions menu. */
export function UserItem({ user, self, groups = [], onAction }: { user: User; self: boolean; groups?: readonly string[]; onAction: (a: UserAction) => void }) {
  const menu = useMenuAnchor();
  const f = fill(user);
  const items: MenuItem[] = [
    { key: 'password', label: 'Reset password…', icon: 'lock', onSelect: () => onAction('password') },
    { key: 'admin', label: user.admin ? 'Remove admin rights' : 'Make admin', icon: 'shield', onSelect: () => onAction('admin') },
    { key: 'quota', label: 'Set quota…', icon: 'gauge', onSelect: () => onAction('quota') },
    user.disabled
      ? { key: 'enable', label: 'Enable', icon: 'check', onSelect: () => onAction('enable') }
      : {
          key: 'disable',
          label: 'Disable…',
          icon: 'ban',
          // The server's rule: administrators stay enabled (take the right away first).
          disabled: self || user.admin,
          hint: self ? 'You cannot disable yourself' : user.admin ? 'Administrators cannot be disabled: remove the admin rights first' : undefined,
          onSelect: () => onAction('disable'),
        },
    { key: 'remove', label: 'Remove…', icon: 'trash', danger: true, disabled: self, hint: self ? 'You cannot remove yourself' : undefined, onSelect: () => onAction('remove') },
  ];
  return (
    <li className={`list-item user-item${user.disabled ? ' inactive' : ''}`} data-user={user.username} aria-label={user.username}>
      <span className="avatar avatar-large" aria-hidden="true">
        {user.username.slice(0, 1).toUpperCase()}
      </span>
      <div className="item-main">
        <div className="item-title">
          <span className="item-name">{user.username}</span>
          {self ? <span className="badge">You</span> : null}
          {user.admin ? <span className="badge badge-active">Admin</span> : null}
          {user.disabled ? <span className="badge badge-expired">Disabled</span> : null}
          {user.sign_in === 'sso' ? (
            <span className="badge" title="Signs in through the single sign-on provider (no password)">
              SSO
            </span>
          ) : user.local ? (
            <span className="badge" title="Signs in with a password, also when only single sign-on is allowed">
              Local
            </span>
          ) : null}
          {user.totp ? (
            <span className="badge" title="Two-step verification is on">
              2FA
            </span>
          ) : null}
        </div>
        {groups.length ? <div className="muted small user-groups">Groups: {groups.join(', ')}</div> : null}
        <div className="usage" title={user.quota === null ? `${user.used.toLocaleString()} bytes` : `${user.used.toLocaleString()} of ${user.quota.toLocaleString()} bytes`}>
          <span className="usage-text">
            {formatSize(user.used)}
            {user.quota === null ? <span className="muted"> · no quota</span> : <span className="muted"> of {formatSize(user.quota)}</span>}
          </span>
          {f !== null ? (
            <span className={`usage-bar${f >= 0.9 ? ' full' : ''}`} role="meter" aria-label={`Storage used by ${user.username}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(f * 100)}>
              <span style={{ width: `${Math.max(f * 100, f > 0 ? 2 : 0)}%` }} />
            </span>
          ) : null}
        </div>
      </div>
      <div className="item-actions">
        <button type="button" className="icon-button" aria-label={`Actions for ${user.username}`} aria-haspopup="menu" aria-expanded={menu.anchor ? true : false} title="Actions" onClick={(e) => menu.toggle(e.currentTarget)}>
          <Icon name="more" />
        </button>
      </div>
      {menu.anchor ? <Menu anchor={menu.anchor} label={`Actions for ${user.username}`} items={items} onClose={menu.close} /> : null}
    </li>
  );
}
