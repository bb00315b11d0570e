/**
 * Pieces of Fastify route schemas shared by the account and admin routes: the
 * contract's error body and the status codes every signed-in route can answer.
 * The schemas document the routes (OpenAPI) and validate their input.
 */
export const errorBody = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string', description: 'A stable snake_case code (docs/api.md, "Errors").' }, message: { type: 'string' } },
} as const;

export const error = (description: string) => ({ ...errorBody, description });

export const noContent = { description: 'Done; no body.', type: 'null' } as const;

/** Every route that needs a signed-in user: 401 without one. */
export const signedIn = { 401: error('No valid access token (`unauthorized`), or a wrong password or code (`invalid_credentials`).') } as const;

/** Admin-only routes: 403 for everybody else. */
export const adminOnly = { ...signedIn, 403: error('The caller is not an administrator (`forbidden`).') } as const;

export const throttled = { 429: error('Too many password or code attempts from this address or for this account (`rate_limited`, with `Retry-After`).') } as const;
