/**
 * A small seeded pseudo-random generator (mulberry32) for tests and the bench: the same seed gives
 * the same sequence, so a failing property or fault test replays and every bench run asks the same.
 * Not for anything secret.
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
