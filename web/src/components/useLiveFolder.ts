import { useEffect, useRef, useState } from 'react';
import { watchChanges, type Change } from '../api/changes';
import type { StorageApi } from '../api/storage';
import { coalesce } from '../lib/coalesce';

/** Changes arriving together (an upload of many files) make one reload, and a steady stream one every this often. */
const SETTLE_MS = 150;

const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));

/**
 * Keeps the open folder current (issue 31): a file uploaded from another tab,
 * by WebDAV or by a grant's other member appears, moves or disappears without
 * a reload. One change stream for the whole stay on the file manager; each
 * change that touches the open folder's direct members reloads its listing.
 * Returns whether the server is reachable, as the stream last found it: an
 * idle page learns this way that the server went away, and when it is back.
 */
export function useLiveFolder(storage: StorageApi, segments: readonly string[], reload: () => void): boolean {
  const [reachable, setReachable] = useState(true);
  const folder = `/${storage.user}${segments.map((s) => `/${s}`).join('')}`;
  const current = useRef({ folder, reload });
  current.current = { folder, reload };
  useEffect(() => {
    const refresh = coalesce(() => current.current.reload(), SETTLE_MS);
    const soon = () => refresh.request();
    const touches = (c: Change) => {
      const here = current.current.folder;
      return parentOf(c.path) === here || (c.from !== undefined && parentOf(c.from) === here) || c.path === here;
    };
    const stop = watchChanges(storage.client, (c) => touches(c) && soon(), soon, setReachable);
    return () => {
      refresh.cancel();
      stop();
      setReachable(true);
    };
  }, [storage]);
  return reachable;
}
