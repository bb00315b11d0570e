import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The `File-Cloud-Origin` of the request being served (docs/api.md "Sync
 * fields"): a writer's own name for itself, copied into the change entries
 * its writes make, so a sync client knows its own echo. It travels with
 * the request's async context, as the request deadline's record does
 * (progress.ts): the journal entry is written by the index's listener of
 * storage events (src/services/search.ts), which every front end's write
 * reaches through the backend, with no parameter to carry it.
 */
const current = new AsyncLocalStorage<string>();

/** Runs `fn` with `origin` as the current request's origin. */
export function withOrigin<T>(origin: string, fn: () => T): T {
  return current.run(origin, fn);
}

/** The origin the current request named, if any. */
export function currentOrigin(): string | undefined {
  return current.getStore();
}

/** An origin's form: 1 to 64 printable ASCII characters of a token (RFC 9110 tchar) or `:` `/` `@`. */
const ORIGIN = /^[A-Za-z0-9!#$%&'*+.^_`|~:/@-]{1,64}$/;

/**
 * The header's value as an origin; undefined when absent; 'invalid' when
 * given but not a short printable token (or given twice): the request is
 * refused rather than its writes journaled under a name the client did not mean.
 */
export function parseOrigin(header: string | string[] | undefined): string | undefined | 'invalid' {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') return 'invalid';
  return ORIGIN.test(header) ? header : 'invalid';
}
