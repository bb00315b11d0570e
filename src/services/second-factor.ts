import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { base32Decode, base32Encode, formatRecoveryCode, matchTotp, normalizeRecoveryCode, otpauthUrl } from '../domain/totp.js';
import type { Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { User } from '../store/users.js';
import { sentence } from '../lib/i18n/sentences.js';

/** 160-bit secrets, as RFC 4226 §4 recommends (the HMAC-SHA-1 key length). */
const SECRET_BYTES = 20;
export const RECOVERY_CODE_COUNT = 10;
export const TOTP_ISSUER = 'File Cloud';

/** Counts attempts under a key; 0 when allowed, else seconds to wait (the login throttle's shape). */
type AttemptLimiter = { hit(key: string, now: number): Promise<number> };

export type SecondFactor = ReturnType<typeof createSecondFactor>;

/**
 * TOTP (RFC 6238) as a second factor: setup (a pending secret until a first
 * code confirms it), the check at sign-in, recovery codes and turning it off.
 * A code is never accepted twice: the step it belongs to is claimed with one
 * conditional UPDATE (exact across nodes), and earlier steps are refused.
 * Code guesses are limited per user as well as per address (the routes'
 * login throttle), so many addresses cannot share out the million codes.
 */
export function createSecondFactor(deps: { store: MetadataStore; clock: Clock; limiter?: AttemptLimiter | undefined }) {
  const { store, clock } = deps;
  const wrongCode = () => new AppError('invalid_credentials', 'The code is wrong or was already used.');

  async function limit(userId: string): Promise<void> {
    const wait = (await deps.limiter?.hit(`totp-user:${userId}`, clock.now())) ?? 0;
    if (wait > 0) throw new AppError('rate_limited', `Too many code attempts for this account; try again in ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
  }

  /** A TOTP code (its step claimed) or an unused recovery code (consumed); false for anything else. */
  async function accept(userId: string, code: string): Promise<boolean> {
    const state = await store.totp.get(userId);
    if (!state?.secret) return false;
    const trimmed = code.trim();
    const step = matchTotp(base32Decode(state.secret) as Buffer, trimmed, clock.now());
    if (step !== undefined) return store.totp.claimStep(userId, step);
    const recovery = normalizeRecoveryCode(trimmed);
    return recovery !== undefined && store.totp.useRecoveryCode(userId, sha256Hex(recovery));
  }

  return {
    /** Starts setup: a new pending secret (replacing an unconfirmed one). 409 when TOTP is already on. */
    async begin(user: Pick<User, 'id' | 'username'>): Promise<{ secret: string; otpauthUrl: string }> {
      const secret = base32Encode(randomBytes(SECRET_BYTES));
      if (!(await store.totp.setPending(user.id, secret))) throw new AppError('already_exists', 'Two-factor sign-in is already on; turn it off first to set up a new authenticator.');
      return { secret, otpauthUrl: otpauthUrl({ issuer: TOTP_ISSUER, account: user.username, secret }) };
    },

    /** Turns TOTP on when `code` matches the pending secret; returns the recovery codes, shown this once. */
    async confirm(userId: string, code: string): Promise<string[]> {
      await limit(userId);
      const state = await store.totp.get(userId);
      if (state?.secret) throw new AppError('already_exists', 'Two-factor sign-in is already on.');
      if (!state?.pending) throw new AppError('bad_request', sentence('apiDetail.totpNoSetup'));
      const step = matchTotp(base32Decode(state.pending) as Buffer, code.trim(), clock.now());
      if (step === undefined) throw wrongCode();
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => formatRecoveryCode(randomBytes(10)));
      const hashes = codes.map((c) => sha256Hex(normalizeRecoveryCode(c) as string));
      // The confirming code's step counts as used: it cannot sign in afterwards.
      if (!(await store.totp.enable(userId, state.pending, step, hashes))) throw new AppError('bad_request', sentence('apiDetail.totpChanged'));
      return codes;
    },

    /** The sign-in check of an account with TOTP on. */
    async check(userId: string, code: string): Promise<boolean> {
      await limit(userId);
      return accept(userId, code);
    },

    /** Turns TOTP off after a valid code (or recovery code). */
    async disable(userId: string, code: string): Promise<void> {
      await limit(userId);
      const state = await store.totp.get(userId);
      if (!state?.secret) throw new AppError('bad_request', sentence('apiDetail.totpOff'));
      if (!(await accept(userId, code))) throw wrongCode();
      await store.totp.disable(userId);
    },

    recoveryCodesLeft: (userId: string) => store.totp.recoveryCodesLeft(userId),
  };
}
