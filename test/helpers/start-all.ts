/** Something a test starts and must stop: a File Cloud process (dispose: stop and remove its data dir; or stop) or a browser (close). */
type Stoppable = { dispose(): Promise<unknown> } | { stop(): Promise<unknown> } | { close(): Promise<unknown> };

const stopOne = (it: Stoppable): Promise<unknown> => ('dispose' in it ? it.dispose() : 'stop' in it ? it.stop() : it.close());

/**
 * Starts several things at once, for a `before` hook: all or none. When one fails to start, the
 * others are stopped before the error is thrown: assigned to nothing, it would be left running, and
 * a File Cloud process left running keeps the test file's process, and with it the whole run, alive
 * (a cluster test whose second node timed out on a busy machine hung CI for 20 minutes).
 */
export async function startAll<T extends readonly Stoppable[]>(...starts: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(starts as readonly Promise<Stoppable>[]);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<Stoppable>).value) as unknown as T;
  for (const s of settled) {
    if (s.status !== 'fulfilled') continue;
    await stopOne(s.value).catch(() => undefined);
  }
  throw failed.reason;
}
