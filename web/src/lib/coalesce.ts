/**
 * One call of `fn`, `ms` after the first request of a burst; requests made
 * while that call is pending are covered by it. Unlike a debounce, which waits
 * for a quiet moment, a steady stream of requests (a batch of uploads landing,
 * a busy change feed) still gets a call every `ms` instead of none until the
 * stream stops: the folder on screen shows each file as it lands.
 */
export function coalesce(fn: () => void, ms: number): { request(): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    request() {
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        fn();
      }, ms);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
