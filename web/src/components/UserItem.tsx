import type { User } from '../api/admin-users';
import { formatSize } from '../lib/format';
import { Icon } from './icons';
import { Menu, useMenuAnchor, type MenuItem } from './Menu';
import { t } from '../lib/i18n';

export type UserAction = 'password' | 'admin' | 'quota' | 'disable' | 'enable' | 'remove';

/** How full a user's quota is, 0…1, or null without a quota. */
const fill = (u: User) => (u.quota === null ? null : u.quota === 0 ? 1 : Math.min(1, u.used / u.quota));

/** One account in the Users list: name, role, state, the groups it is in, usage against quota, and an actions menu. */
export function UserItem({ user, self, groups = [], onAction }: { user: User; self: boolean; groups?: readonly string[]; onAction: (a: UserAction) => void }) {
  const menu = useMenuAnchor();
  const f = fill(user);
  const items: MenuItem[] = [
    { key: 'password', label: t('userItem.resetPassword'), icon: 'lock', onSelect: () => onAction('password') },
    { key: 'admin', label: user.admin ? t('userItem.removeAdmin') : t('userItem.makeAdmin'), icon: 'shield', onSelect: () => onAction('admin') },
    { key: 'quota', label: t('userItem.setQuota'), icon: 'gauge', onSelect: () => onAction('quota') },
    user.disabled
      ? { key: 'enable', label: t('userItem.enable'), icon: 'check', onSelect: () => onAction('enable') }
      : {
          key: 'disable',
          label: t('userItem.disable'),
          icon: 'ban',
          // The server's rule: administrators stay enabled (take the right away first).
          disabled: self || user.admin,
          hint: self ? t('userItem.cannotDisableSelf') : user.admin ? t('userItem.cannotDisableAdmin') : undefined,
          onSelect: () => onAction('disable'),
        },
    { key: 'remove', label: t('userItem.remove'), icon: 'trash', danger: true, disabled: self, hint: self ? t('userItem.cannotRemoveSelf') : undefined, onSelect: () => onAction('remove') },
  ];
  return (
    <li className={`list-item user-item${user.disabled ? ' inactive' : ''}`} data-user={user.username} aria-label={user.username}>
      <span className="avatar avatar-large" aria-hidden="true">
        {user.username.slice(0, 1).toUpperCase()}
      </span>
      <div className="item-main">
        <div className="item-title">
          <span className="item-name">{user.username}</span>
          {self ? <span className="badge">{t('userItem.you')}</span> : null}
          {user.admin ? <span className="badge badge-active">{t('userItem.admin')}</span> : null}
          {user.disabled ? <span className="badge badge-expired">{t('userItem.disabled')}</span> : null}
          {user.sign_in === 'sso' ? (
            <span className="badge" title={t('userItem.ssoTitle')}>
              SSO
            </span>
          ) : user.local ? (
            <span className="badge" title={t('userItem.localTitle')}>
              {t('userItem.local')}
            </span>
          ) : null}
          {user.totp ? (
            <span className="badge" title={t('totp.turnedOn')}>
              2FA
            </span>
          ) : null}
        </div>
        {groups.length ? <div className="muted small user-groups">{t('userItem.groups', { groups: groups.join(', ') })}</div> : null}
        <div className="usage" title={user.quota === null ? t('userItem.bytes', { used: user.used }) : t('userItem.bytesOf', { used: user.used, quota: user.quota })}>
          <span className="usage-text">
            {formatSize(user.used)}
            {user.quota === null ? <span className="muted"> · {t('userItem.noQuota')}</span> : <span className="muted"> {t('userItem.ofQuota', { quota: formatSize(user.quota) })}</span>}
          </span>
          {f !== null ? (
            <span className={`usage-bar${f >= 0.9 ? ' full' : ''}`} role="meter" aria-label={t('userItem.storageOf', { name: user.username })} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(f * 100)}>
              <span style={{ width: `${Math.max(f * 100, f > 0 ? 2 : 0)}%` }} />
            </span>
          ) : null}
        </div>
      </div>
      <div className="item-actions">
        <button type="button" className="icon-button" aria-label={t('row.actionsFor', { name: user.username })} aria-haspopup="menu" aria-expanded={menu.anchor ? true : false} title={t('userItem.actions')} onClick={(e) => menu.toggle(e.currentTarget)}>
          <Icon name="more" />
        </button>
      </div>
      {menu.anchor ? <Menu anchor={menu.anchor} label={t('row.actionsFor', { name: user.username })} items={items} onClose={menu.close} /> : null}
    </li>
  );
}
