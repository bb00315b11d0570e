import { browseUrl, encodeSegments, type Segments } from '../api/paths';

/**
 * Where a browser shows folders: the signed-in user's own tree, or one item
 * another account granted them (reached at /storage/<owner>/<path>). The
 * shared one never shows anything above the granted folder, and offers
 * write actions only for a `write` grant.
 */
export type Place = {
  /** The account whose tree is browsed. */
  readonly owner: string;
  /** The granted folder (the first breadcrumb), or [] for one's own root. */
  readonly root: Segments;
  readonly shared: boolean;
  readonly writable: boolean;
  /** The app's address of a folder of this place. */
  url(segments: Segments): string;
};

/** The app's pages of what others shared: the list, and /with-me/<owner>/<path>/ for browsing one. */
export const WITH_ME_PATH = '/with-me';

export const withMeUrl = (owner: string, segments: Segments): string => `${WITH_ME_PATH}/${encodeSegments([owner, ...segments])}/`;

export const ownPlace = (user: string): Place => ({ owner: user, root: [], shared: false, writable: true, url: browseUrl });

export const sharedPlace = (owner: string, root: Segments, writable: boolean): Place => ({
  owner,
  root,
  shared: true,
  writable,
  url: (segments) => withMeUrl(owner, segments),
});

/** `[owner, ...segments]` from a /with-me/<owner>/<path> pathname; undefined when it is not one (or names no owner). */
export function ownerPathFrom(pathname: string): string[] | undefined {
  if (!pathname.startsWith(`${WITH_ME_PATH}/`)) return undefined;
  const parts = pathname.slice(WITH_ME_PATH.length + 1).split('/').filter((s) => s !== '');
  try {
    const decoded = parts.map((p) => decodeURIComponent(p));
    return decoded.length > 0 ? decoded : undefined;
  } catch {
    return undefined;
  }
}
