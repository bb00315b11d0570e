/**
 * Bounds concurrent work (password hashing): at most `limit` tasks run, at
 * most `maxQueue` wait; beyond that `run` rejects at once with QueueFullError
 * so a flood cannot pile up memory or latency without bound.
 */
export class QueueFullError extends Error {}

export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly maxQueue: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      if (this.waiting.length >= this.maxQueue) throw new QueueFullError('too many tasks waiting');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // Hand the slot straight to the next waiter, so `active` never dips and lets a newcomer jump the queue.
      if (next) next();
      else this.active--;
    }
  }
}
