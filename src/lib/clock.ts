/** Time source, injectable so expiry rules can be tested without waiting. */
export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };
