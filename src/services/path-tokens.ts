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

/**
 * `recipient`: a token made by someone an item is shared with (a grant, src/services/grants.ts), not by
 * its owner: `fcp1.<expiry>.<base64url recipient>.<mac>`, the MAC also over the recipient's name and auth
 * epoch. It opens the path only while the grant still reaches it, and ends with either password.
 */
export type PathTokenClaims = { owner: string; keyId: string; expiresAt: number; authEpoch: string; recipient?: { name: string; authEpoch: string } | undefined };

function mac(secret: Buffer, c: PathTokenClaims): string {
  const fields = [c.owner, c.keyId, String(c.expiresAt), c.authEpoch, ...(c.recipient ? ['recipient', c.recipient.name, c.recipient.authEpoch] : [])];
  return createHmac('sha256', secret).update(fields.join('\0'), 'utf8').digest('base64url');
}

/**
 * The expiry (epoch seconds) of a token made at `nowMs` for `ttl` seconds: rounded up, so a token lives at
 * least `ttl` whole seconds (at most one more) — rounding down let a 1-second token made at x.999 s die 1 ms later.
 */
export const pathTokenExpiresAt = (nowMs: number, ttl: number): number => Math.ceil(nowMs / 1000) + ttl;

/** expiresAt in epoch seconds. */
export function makePathToken(secret: Buffer, claims: PathTokenClaims): string {
  const recipient = claims.recipient ? `${Buffer.from(claims.recipient.name, 'utf8').toString('base64url')}.` : '';
  return `${PREFIX}.${claims.expiresAt}.${recipient}${mac(secret, claims)}`;
}

const SHAPE = /^fcp1\.(\d{1,12})\.(?:([A-Za-z0-9_-]{1,120})\.)?([A-Za-z0-9_-]{43})$/;

/** The expiry (epoch seconds) a token claims, or undefined when it is not shaped like a path token. */
export function pathTokenExpiry(token: string): number | undefined {
  const m = SHAPE.exec(token);
  return m ? Number(m[1]) : undefined;
}

/** The recipient a token names (made through a grant), or undefined for an owner's token or a malformed one. */
export function pathTokenRecipient(token: string): string | undefined {
  const m = SHAPE.exec(token);
  return m?.[2] === undefined ? undefined : Buffer.from(m[2], 'base64url').toString('utf8');
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
