import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

/**
 * Path tokens: `fcp1.<expiry seconds>.<mac>` where mac = HMAC-SHA256(secret,
 * owner NUL keyId NUL expiry NUL authEpoch), base64url. Nothing is stored:
 * the path comes from the request, the epoch from the owner's record, so a
 * password change (new epoch) or removing the owner revokes every token, and
 * a restart does not. NUL cannot occur in a name, so fields cannot be shifted
 * into each other.
 */
const PREFIX = 'fcp1';

export type PathTokenClaims = { owner: string; keyId: string; expiresAt: number; authEpoch: string };

function mac(secret: Buffer, c: PathTokenClaims): string {
  return createHmac('sha256', secret).update([c.owner, c.keyId, String(c.expiresAt), c.authEpoch].join('\0'), 'utf8').digest('base64url');
}

/** expiresAt in epoch seconds. */
export function makePathToken(secret: Buffer, claims: PathTokenClaims): string {
  return `${PREFIX}.${claims.expiresAt}.${mac(secret, claims)}`;
}

/** The expiry (epoch seconds) a token claims, or undefined when it is not shaped like a path token. */
export function pathTokenExpiry(token: string): number | undefined {
  const m = /^fcp1\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return m ? Number(m[1]) : undefined;
}

export type PathTokenCheck = 'ok' | 'malformed' | 'expired' | 'bad_signature';

export function verifyPathToken(secret: Buffer, token: string, expected: Omit<PathTokenClaims, 'expiresAt'>, nowSeconds: number): PathTokenCheck {
  const expiresAt = pathTokenExpiry(token);
  if (expiresAt === undefined) return 'malformed';
  const good = mac(secret, { ...expected, expiresAt });
  // Check the signature before the expiry so a forged expiry is reported as forged.
  if (!safeEqual(token.slice(token.lastIndexOf('.') + 1), good)) return 'bad_signature';
  if (expiresAt <= nowSeconds) return 'expired';
  return 'ok';
}
