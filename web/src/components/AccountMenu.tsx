import { AUDIT_PATH, GROUPS_PATH, navigate, SETTINGS_PATH, USERS_PATH } from '../lib/router';
import { usePhone } from '../lib/phone';
import { Icon } from './icons';
import { Menu, useMenuAnchor, type MenuItem } from './Menu';
import { useAccount } from './useAccount';

/**
 * Who is signed in, as a button that opens the account menu: Settings, Users,
 * Groups and Audit log for admins, the keyboard shortcuts where a page has them, and
 * on a phone Sign out (the header has no room for its own button there).
 */
export function AccountMenu({ user, onShortcuts, onSignOut }: { user: string; onShortcuts?: () => void; onSignOut: () => void }) {
  const { me } = useAccount();
  const menu = useMenuAnchor();
  const phone = usePhone();
  const items: MenuItem[] = [{ key: 'settings', label: 'Settings', icon: 'settings', onSelect: () => navigate(SETTINGS_PATH) }];
  if (onShortcuts && !phone) items.push({ key: 'shortcuts', label: 'Keyboard shortcuts', icon: 'keyboard', onSelect: onShortcuts });
  if (me?.admin) items.push({ key: 'users', label: 'Users', icon: 'users', onSelect: () => navigate(USERS_PATH) });
  if (me?.admin) items.push({ key: 'groups', label: 'Groups', icon: 'users', onSelect: () => navigate(GROUPS_PATH) });
  if (me?.admin) items.push({ key: 'audit', label: 'Audit log', icon: 'shield', onSelect: () => navigate(AUDIT_PATH) });
  if (phone) items.push({ key: 'sign-out', label: 'Sign out', icon: 'logout', onSelect: onSignOut });
  return (
    <>
      <button
        type="button"
        className="user-name account-button"
        title={`Signed in as ${user}`}
        aria-label={`Account: ${user}`}
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
      {menu.anchor ? <Menu anchor={menu.anchor} label="Account" items={items} onClose={menu.close} /> : null}
    </>
  );
}
