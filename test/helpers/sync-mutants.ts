// Deliberately broken planners, to see the model runs fail (issue 55): each breaks one rule the
// planner keeps, by rewriting the steps of a correct plan. Test code only: the client runs one when
// a test starts it with sync-mutant-hooks (NODE_OPTIONS --import) and FILE_CLOUD_SYNC_TEST_MUTANT.
import type { Op, PlanInput } from '../../packages/sync/src/planner.js';

export const MUTANTS = {
  /** A file new on the server (no base here) is deleted there instead of downloaded: a delete no base explains. */
  'delete-without-base': (op: Op, input: PlanInput): Op => (op.kind === 'download' && !op.replaces && !input.base.has(op.path) ? { kind: 'delete-remote', path: op.path, expect: op.remote } : op),
  /** Both sides changed: the local version is uploaded over the server's instead of becoming a conflict copy. */
  'conflict-overwrites': (op: Op): Op => (op.kind === 'conflict' ? { kind: 'upload', path: op.path, local: op.local, expect: op.remote } : op),
  /** A local edit of a file deleted on the server is deleted here: a delete beats an edit. */
  'edit-loses-to-delete': (op: Op, input: PlanInput): Op => (op.kind === 'upload' && !op.expect && input.base.has(op.path) && !input.remote.has(op.path) ? { kind: 'delete-local', path: op.path, local: op.local } : op),
} satisfies Record<string, (op: Op, input: PlanInput) => Op>;

export type Mutant = keyof typeof MUTANTS;

export const isMutant = (name: string | undefined): name is Mutant => name !== undefined && Object.hasOwn(MUTANTS, name);

/** `plan` broken by `mutant`: the correct plan's steps, each rewritten by it. */
export function mutated(plan: (input: PlanInput) => Op[], mutant: Mutant): (input: PlanInput) => Op[] {
  return (input) => plan(input).map((op) => MUTANTS[mutant](op, input));
}
