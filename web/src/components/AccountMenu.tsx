import { AUDIT_PATH, GROUPS_PATH, navigate, SETTINGS_PATH, USERS_PATH } from '../lib/router';
import { usePhone } from '../lib/phone';
import { Icon } from './icons';
import { Menu, useMenuAnchor, type MenuItem } from './Menu';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';

/**
 * Who is signed in, as a button that opens the account menu: Settings, Users,
 * Groups and Audit log for admins, the keyboard shortcuts where a page has them, and
 * on a phone Sign out (the header has no room for its own button there).
 */
export function AccountMenu({ user, onShortcuts, onSignOut }: { user: string; onShortcuts?: () => void; onSignOut: () => void }) {
  const { me } = useAccount();
  const menu = useMenuAnchor();
  const phone = usePhone();
  const items: MenuItem[] = [{ key: 'settings', label: t('nav.settings'), icon: 'settings', onSelect: () => navigate(SETTINGS_PATH) }];
  if (onShortcuts && !phone) items.push({ key: 'shortcuts', label: t('nav.shortcuts'), icon: 'keyboard', onSelect: onShortcuts });
  if (me?.admin) items.push({ key: 'users', label: t('nav.users'), icon: 'users', onSelect: () => navigate(USERS_PATH) });
  if (me?.admin) items.push({ key: 'groups', label: t('nav.groups'), icon: 'users', onSelect: () => navigate(GROUPS_PATH) });
  if (me?.admin) items.push({ key: 'audit', label: t('nav.audit'), icon: 'shield', onSelect: () => navigate(AUDIT_PATH) });
  if (phone) items.push({ key: 'sign-out', label: t('nav.signOut'), icon: 'logout', onSelect: onSignOut });
  return (
    <>
      <button
        type="button"
        className="user-name account-button"
        title={t('nav.signedInAs', { user })}
        aria-label={t('nav.account', { user })}
        aria-haspopup="menu"
        aria-expanded={menu.anchor ? true : false}
        onClick={(e) => menu.toggle(e.currentTarget)}
      >
        <span className="avatar" aria-hidden="true">
          {user.slice(0, 1).toUpperCase()}
        </span>
        <span className="hide-phone">{user}</span>
        <Icon name="chevronDown" size={16} className="hide-phone" />
      </button>
      {menu.anchor ? <Menu anchor={menu.anchor} label={t('nav.accountMenu')} items={items} onClose={menu.close} /> : null}
    </>
  );
}
