/**
 * Buffers of one size lent out and given back, so a hot path that needs a
 * large scratch buffer per request (an encrypted Range read's stored chunk)
 * reads into memory already faulted in instead of fresh memory each time,
 * which also spares the young collections that fresh buffers bring on. At
 * most `keep` buffers wait in the pool; more are made while more are out,
 * and dropped when given back to a full pool.
 */
export type BufferPool = {
  /** A buffer of the pool's size, the caller's until it gives it back. */
  take(): Buffer;
  /** Gives a buffer taken from this pool back; nothing of it may be used afterwards. */
  give(b: Buffer): void;
};

export function bufferPool(size: number, keep: number): BufferPool {
  const free: Buffer[] = [];
  return {
    take: () => free.pop() ?? Buffer.allocUnsafeSlow(size),
    give(b) {
      if (b.length === size && free.length < keep && !free.includes(b)) free.push(b);
    },
  };
}
