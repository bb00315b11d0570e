/**
 * Who is making a request, resolved once per request by the auth plugin.
 * - `user`: an access token from the Authorization header.
 * - `pathToken`: a signed path token from `?token=`; it authorizes GET/HEAD of
 *   exactly `path` (a normalized storage key) and nothing else.
 */
export type Principal =
  | { readonly kind: 'user'; readonly userId: string; readonly username: string; readonly isAdmin: boolean; readonly sessionId: string }
  | { readonly kind: 'pathToken'; readonly username: string; readonly keyId: string };

export type AuthKind = Principal['kind'];
