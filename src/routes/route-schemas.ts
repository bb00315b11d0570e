import { empty, json, ErrorBody } from '../http/schemas.js';

/**
 * Pieces of the route schemas shared by the account and admin routes (in the
 * shapes of src/http/schemas.ts): the contract's error answers and the
 * status codes every signed-in route can answer.
 */
export const error = (description: string) => json(description, ErrorBody);

export const noContent = empty('Done; no body.');

/** Every route that needs a signed-in user: 401 without one. */
export const signedIn = { 401: error('No valid access token (`unauthorized`), or a wrong password or code (`invalid_credentials`).') } as const;

/** Admin-only routes: 403 for everybody else. */
export const adminOnly = { ...signedIn, 403: error('The caller is not an administrator (`forbidden`).') } as const;

export const throttled = { 429: error('Too many password or code attempts from this address or for this account (`rate_limited`, with `Retry-After`).') } as const;
