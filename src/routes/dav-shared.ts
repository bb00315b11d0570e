import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { parseStoragePath, type StorageKey } from '../domain/storage-path.js';
import { DAV_PREFIX, encodeSegment, hrefFor, rawDavPath } from '../dav/paths.js';
import type { Operations } from '../services/operations.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Not a valid user name (it has spaces), so it cannot clash with a user's tree under /dav/. */
export const SHARED_WITH_ME = 'Shared with me';

/** How a front end writes the href of a key: its own tree's `/dav/<user>/…`, or a place in `Shared with me`. */
export type Hrefs = (key: StorageKey, isCollection: boolean) => string;

/** A URL below `/dav/Shared with me/`: the collection itself (no `entry`), or a received item and the raw rest below it. */
export type SharedPath = { readonly entry: string | undefined; readonly rest: string | undefined };

/**
 * `/dav/Shared with me/<name> (<owner>)/…` (issue 29): the items shared with
 * the caller, mounted where WebDAV clients already look. This only
 * translates URLs: a place here is the owner's key, and every request on it
 * is answered by the same handlers under the same `decide` (with the grant)
 * as at `/dav/<owner>/<path>`; hrefs in answers stay in this collection.
 * What is shared with the caller is the operation layer's answer (`sharedWithMe`).
 */
export function createSharedWithMe(deps: { operations: Pick<Operations, 'as'>; basePath: string }) {
  const { basePath } = deps;
  const itemsOf = (principal: Principal) => deps.operations.as(principal).sharedWithMe();
  const prefix = `${basePath}${DAV_PREFIX}${encodeSegment(SHARED_WITH_ME)}/`;

  /** The place of a raw path below /dav/ in `Shared with me`, or undefined when it lies elsewhere. */
  function parse(raw: string): SharedPath | undefined {
    const slash = raw.indexOf('/');
    const first = slash === -1 ? raw : raw.slice(0, slash);
    let name: string;
    try {
      name = decodeURIComponent(first);
    } catch {
      return undefined;
    }
    if (name !== SHARED_WITH_ME) return undefined;
    const below = slash === -1 ? '' : raw.slice(slash + 1);
    if (below === '') return { entry: undefined, rest: undefined };
    const next = below.indexOf('/');
    let entry: string;
    try {
      entry = decodeURIComponent(next === -1 ? below : below.slice(0, next));
    } catch {
      throw new AppError('invalid_path', sentence('apiDetail.pathNotUtf8'));
    }
    return { entry, rest: next === -1 ? undefined : below.slice(next + 1) };
  }

  /** The owner's key a received item's URL names, and the hrefs that keep answers in this collection; 404 for no such item. */
  async function resolve(principal: Principal, at: SharedPath & { entry: string }): Promise<{ key: StorageKey; trailingSlash: boolean; hrefs: Hrefs }> {
    const item = (await itemsOf(principal)).find((i) => i.name === at.entry);
    if (!item) throw new AppError('not_found', `Nothing named "${at.entry}" is shared with you.`);
    // The rest is checked as any storage path is (no `..`, no empty segment), below the item's own key.
    const raw = [item.root.user, ...item.root.segments].map(encodeSegment).join('/') + (at.rest === undefined ? '' : `/${at.rest}`);
    const { key, trailingSlash } = parseStoragePath(item.root.segments.length === 0 ? `${raw}/` : raw);
    const base = `${prefix}${encodeSegment(item.name)}`;
    const depth = item.root.segments.length;
    const hrefs: Hrefs = (k, isCollection) => {
      const inside = k.user === item.root.user && item.root.segments.every((s, i) => k.segments[i] === s);
      if (!inside) return hrefFor(basePath, k, isCollection);
      return base + k.segments.slice(depth).map((s) => `/${encodeSegment(s)}`).join('') + (isCollection ? '/' : '');
    };
    return { key, trailingSlash, hrefs };
  }

  return {
    prefix,
    parse,
    resolve,

    /** The members of `Shared with me`: each received item at its href, with its owner's key. */
    async members(principal: Principal): Promise<{ href: string; name: string; key: StorageKey; isFile: boolean }[]> {
      return (await itemsOf(principal)).map((i) => ({ href: `${prefix}${encodeSegment(i.name)}${i.isFile ? '' : '/'}`, name: i.name, key: i.root, isFile: i.isFile }));
    },

    /** A Destination header in `Shared with me` as the owner's `/dav/<owner>/…` URL (others unchanged), for the WebDAV service. */
    async destination(principal: Principal, header: string | undefined): Promise<string | undefined> {
      if (header === undefined) return header;
      const m = /^(?:[a-z][a-z0-9+.-]*:\/\/[^/?#]*)?(\/[^?#]*)/i.exec(header.trim());
      const raw = m ? rawDavPath(m[1] as string, basePath) : undefined;
      const at = raw === undefined ? undefined : parse(raw);
      if (!at) return header;
      if (at.entry === undefined) throw new AppError('forbidden', `Nothing can be put at ${SHARED_WITH_ME}/ itself.`);
      const { key, trailingSlash } = await resolve(principal, { entry: at.entry, rest: at.rest });
      return hrefFor(basePath, key, trailingSlash);
    },
  };
}

export type SharedWithMe = ReturnType<typeof createSharedWithMe>;
