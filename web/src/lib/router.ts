import { useEffect, useSyncExternalStore } from 'react';
import { stripBase, withBase } from './base';

/** A tiny history router: the app's pages are /login, /browse/<path>/, /shared ("Shared by me"), /settings and /admin/users. */
/** The "Shared by me" page: the signed-in user's share links. */
export const SHARED_PATH = '/shared';
/** The signed-in user's own account: password, sessions, app passwords, two-step verification. */
export const SETTINGS_PATH = '/settings';
/** User management, for admins (under /admin/, the server's admin pages). */
export const USERS_PATH = '/admin/users';
/** The signed-in user's trash (only when the server keeps one: --trash-days). */
export const TRASH_PATH = '/trash';
/** Recent: the newest changes of one's own files and of what others share with one. */
export const RECENT_PATH = '/recent';
/** Groups and their members, for admins. */
export const GROUPS_PATH = '/admin/groups';
/** The audit log, for admins. */
export const AUDIT_PATH = '/admin/audit';

/** Pages other than folders that a signed-in user can land on (and come back to after signing in again). */
export const PAGE_PATHS: readonly string[] = [SHARED_PATH, '/with-me', RECENT_PATH, SETTINGS_PATH, USERS_PATH, GROUPS_PATH, TRASH_PATH, AUDIT_PATH];

/** The app's own page paths; any other path shows the not-found view (the server's UI_PAGES in src/routes/ui.ts agree). */
const APP_PATHS = [/^\/$/, /^\/login$/, /^\/shared$/, /^\/trash$/, /^\/recent$/, /^\/with-me(\/.*)?$/, /^\/browse(\/.*)?$/, /^\/settings(\/.*)?$/, /^\/admin(\/.*)?$/];
export const isAppPath = (pathname: string): boolean => APP_PATHS.some((p) => p.test(pathname));

const subscribers = new Set<() => void>();
const notify = () => subscribers.forEach((s) => s());
window.addEventListener('popstate', notify);

/** Goes to an app path (`/browse/…`, without the base path). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === stripBase(location.pathname) + location.search) return;
  if (opts.replace) history.replaceState(null, '', withBase(to));
  else history.pushState(null, '', withBase(to));
  notify();
}

const subscribe = (cb: () => void) => {
  subscribers.add(cb);
  return () => subscribers.delete(cb);
};

export function useLocation(): string {
  return useSyncExternalStore(subscribe, () => stripBase(location.pathname));
}

/** The value of one query parameter of the current address (null when absent); re-renders when it changes. */
export function useQueryParam(name: string): string | null {
  return useSyncExternalStore(subscribe, () => new URLSearchParams(location.search).get(name));
}

/** Sets document.title for as long as a view is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · File Cloud` : 'File Cloud';
  }, [title]);
}

/** For <a href> links that the app handles itself: plain left clicks route in place; others (new tab) go to the browser. */
export function onLinkClick(e: { button: number; metaKey: boolean; ctrlKey: boolean; shiftKey: boolean; altKey: boolean; preventDefault(): void }, to: string): void {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(to);
}
