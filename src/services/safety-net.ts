import { purgePlan, type Kept } from '../domain/purge-plan.js';
import type { FileVersion } from '../store/versions.js';
import type { TrashItem } from '../store/trash.js';

/** Rows of each kind read at first; doubled while the plan cannot be decided from what was read. */
const FIRST_READ = 100;

export type SafetyNet = ReturnType<typeof createSafetyNet>;

/**
 * An owner's kept bytes (old versions and the trash) made into room for the
 * owner's own upload that does not fit (CONTRACT "Trash and versions"). The
 * plan (domain/purge-plan.ts) is decided from the rows before anything is
 * purged: oldest first across both kinds, only as much as needed, and
 * nothing when even all of it would not make the upload fit. Who may cause a
 * purge is the caller's rule (services/usage.ts: only the owner's writes).
 */
export function createSafetyNet(deps: {
  versions: { oldest(owner: string, limit: number): Promise<FileVersion[]>; purge(v: FileVersion): Promise<number> };
  trash: { oldest(owner: string, limit: number): Promise<TrashItem[]>; purge(item: TrashItem): Promise<number> };
}) {
  return {
    /** Purges at least `needed` bytes of the owner's versions and trash when they hold that many; returns the bytes freed. */
    async makeRoom(owner: string, needed: number): Promise<number> {
      if (needed <= 0) return 0;
      for (let limit = FIRST_READ; ; limit *= 2) {
        const [versions, trash] = await Promise.all([deps.versions.oldest(owner, limit), deps.trash.oldest(owner, limit)]);
        const plan = purgePlan(
          {
            versions: versions.map((v): Kept => ({ kind: 'version', id: v.id, at: v.createdAt, size: v.size })),
            trash: trash.map((t): Kept => ({ kind: 'trash', id: t.id, at: t.deletedAt, size: t.size })),
          },
          { versions: versions.length < limit, trash: trash.length < limit },
          needed,
        );
        if (plan.purge === undefined) {
          if (plan.more) continue;
          return 0;
        }
        let freed = 0;
        const version = new Map(versions.map((v) => [v.id, v]));
        const trashed = new Map(trash.map((t) => [t.id, t]));
        for (const k of plan.purge) {
          freed += k.kind === 'version' ? await deps.versions.purge(version.get(k.id) as FileVersion) : await deps.trash.purge(trashed.get(k.id) as TrashItem);
        }
        return freed;
      }
    },
  };
}
