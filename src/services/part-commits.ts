import type { Entry, StagedFile } from '../storage/backend.js';

/** Small parts of one multipart upload committed at once, at most (one more is read meanwhile). */
export const PARTS_AT_ONCE = 4;
/** A part up to this size may commit while later parts are read; its bytes are held until then. */
export const SMALL_PART = 256 * 1024;

/**
 * The parts of a multipart upload written in their order, the commits of small ones overlapping:
 * each part is staged (read, and on an object store its name claimed) in order, and its commit (a
 * PutObject and the index's transaction, each a wait on a service) goes on while the next parts
 * are read, up to PARTS_AT_ONCE at a time. One after another, a request of many small files kept a
 * single store request in flight (docs/performance.md, "Thirteenth change"). What stays as it was:
 * - a part whose name a part still in flight asked for waits for those commits, so the later part
 *   is the one renamed (`name (1).ext`) or the one that stays (`?overwrite=true`), as in order;
 * - a part larger than SMALL_PART commits alone (no other in flight), so memory held by commits
 *   stays within PARTS_AT_ONCE × SMALL_PART per request;
 * - the first failure ends the upload: nothing staged after it is committed (it is discarded), the
 *   commits in flight are waited for, and the failure is thrown. Parts committed before it stay, as
 *   before; a part read before it and committing beside it may stay too.
 * Entries come back in the parts' order.
 */
export async function commitInOrder<P>(parts: AsyncIterable<P>, stage: (part: P) => Promise<{ name: string; file: StagedFile }>, commit: (file: StagedFile) => Promise<Entry>): Promise<Entry[]> {
  const entries: Entry[] = [];
  const inFlight = new Map<Promise<void>, string>();
  let failure: { error: unknown } | undefined;
  const settle = async (atMost: number): Promise<void> => {
    while (inFlight.size > atMost) await Promise.race(inFlight.keys());
  };
  try {
    for await (const part of parts) {
      const { name, file } = await stage(part);
      const large = file.size > SMALL_PART;
      if (large || [...inFlight.values()].includes(name)) await settle(0);
      if (failure) {
        await file.discard().catch(() => undefined);
        break;
      }
      const at = entries.length;
      entries.push(undefined as unknown as Entry);
      const committing: Promise<void> = commit(file)
        .then(
          (entry) => void (entries[at] = entry),
          async (e: unknown) => {
            failure ??= { error: e };
            await file.discard().catch(() => undefined);
          },
        )
        .finally(() => inFlight.delete(committing));
      inFlight.set(committing, name);
      await settle(large ? 0 : PARTS_AT_ONCE - 1);
      if (failure) break;
    }
  } finally {
    await settle(0);
  }
  if (failure) throw failure.error;
  return entries;
}
