import type { Op } from './planner.js';

/** More than this many deletions on one side … */
export const MASS_DELETE_FILES = 50;
/** … and more than this share of that side's files pauses the plan. */
export const MASS_DELETE_SHARE = 0.3;

export interface GuardInput {
  readonly ops: readonly Op[];
  readonly localFiles: number;
  readonly remoteFiles: number;
  readonly baseFiles: number;
  /** The same for folders. */
  readonly localDirs?: number;
  readonly remoteDirs?: number;
  readonly baseDirs?: number;
  readonly rootExists: boolean;
  /** The marker `.file-cloud-sync` is in the root. */
  readonly markerPresent: boolean;
  /** A state (base) exists for this folder: it has been synced before. */
  readonly synced: boolean;
  readonly allowDeletes: boolean;
}

/**
 * Why the plan must wait for a person (`undefined`: it may run). A deletion nobody can explain —
 * an unmounted disk, a folder emptied by mistake, a restored backup — looks like a mass delete, and
 * a sync client that follows it destroys the other side too.
 */
export function guardReason(g: GuardInput): string | undefined {
  if (g.allowDeletes) return undefined;
  if (g.synced && !g.rootExists) return 'the local folder is missing (unmounted disk?)';
  if (g.synced && !g.markerPresent) return 'the marker file .file-cloud-sync is missing from the local folder (another disk mounted there?)';
  if (g.synced && g.baseFiles + (g.baseDirs ?? 0) > 0 && g.localFiles + (g.localDirs ?? 0) === 0) return 'the local folder is empty but was not at the last sync';
  // A folder's removal on the server may take the folders below it along (one step for a chain).
  const count = (kind: Op['kind']): number => g.ops.reduce((n, o) => n + (o.kind !== kind ? 0 : 1 + (o.kind === 'rmdir-remote' ? (o.below?.length ?? 0) : 0)), 0);
  const [local, remote, localDirs, remoteDirs] = [count('delete-local'), count('delete-remote'), count('rmdir-local'), count('rmdir-remote')];
  if (massive(local, g.localFiles)) return `the plan deletes ${local} of ${g.localFiles} local files`;
  if (massive(remote, g.remoteFiles)) return `the plan deletes ${remote} of ${g.remoteFiles} files on the server`;
  if (massive(localDirs, g.localDirs ?? 0)) return `the plan removes ${localDirs} of ${g.localDirs ?? 0} local folders`;
  if (massive(remoteDirs, g.remoteDirs ?? 0)) return `the plan removes ${remoteDirs} of ${g.remoteDirs ?? 0} folders on the server`;
  return undefined;
}

const massive = (deletes: number, files: number): boolean => deletes > MASS_DELETE_FILES && deletes > MASS_DELETE_SHARE * files;
