import { execute, recordAll, type ExecContext } from './executor.js';
import type { Op } from './planner.js';
import { HttpError } from './remote-api.js';

/** Transfers in flight at once: a round's uploads and downloads overlap their round trips and the server's fsync of each file. */
export const TRANSFERS_AT_ONCE = 8;

const isTransfer = (op: Op): boolean => op.kind === 'upload' || op.kind === 'download';
type Bookkeeping = Extract<Op, { kind: 'record' | 'forget' }>;
const isBookkeeping = (op: Op): op is Bookkeeping => op.kind === 'record' || op.kind === 'forget';

/**
 * Carries out a plan in its order. Transfers touch one path each and are independent, so a run of
 * them goes several at once; records and forgets change only the base and go into the journal
 * together. A step the server refuses for its own path (a name it does not accept, a file where a
 * folder is) does not stop the others; the run then ends with exit 1 naming it. A refusal of the
 * credential or a server without the sync fields stops at once (after the transfers in flight).
 */
export async function act(ops: readonly Op[], ctx: ExecContext, log: (line: string) => void, describe: (op: Op) => string): Promise<string[]> {
  const failed: string[] = [];
  const one = async (op: Op): Promise<void> => {
    let outcome;
    try {
      outcome = await execute(ctx, op);
    } catch (e) {
      if (!(e instanceof HttpError) || e.status === 401 || e.status === 403 || e.status >= 500) throw e;
      failed.push(`${describe(op)}: ${e.message}`);
      return;
    }
    // A folder's record or forget changes only the base, like the files' ones: nothing to tell.
    if (op.kind !== 'record-folder' && op.kind !== 'forget-folder') log(`${outcome === 'done' ? '' : 'skipped (changed meanwhile): '}${describe(op)}`);
  };
  for (let i = 0; i < ops.length; ) {
    const op = ops[i] as Op;
    let j = i + 1;
    if (isBookkeeping(op)) {
      while (j < ops.length && isBookkeeping(ops[j] as Op)) j++;
      recordAll(ctx, ops.slice(i, j) as Bookkeeping[]);
    } else if (isTransfer(op)) {
      while (j < ops.length && isTransfer(ops[j] as Op)) j++;
      await inParallel(ops.slice(i, j), TRANSFERS_AT_ONCE, one);
    } else {
      await one(op);
    }
    i = j;
  }
  return failed;
}

/** `run` over `items`, at most `n` at once; the first error is thrown once those running have ended. */
async function inParallel<T>(items: readonly T[], n: number, run: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  let error: { e: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (error === undefined && next < items.length) {
      const x = items[next++] as T;
      await run(x).catch((e: unknown) => void (error ??= { e }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  if (error) throw error.e;
}
