/** A user's TOTP state (the secret in clear: codes are computed from it). */
export type TotpState = { readonly secret: string | null; readonly pending: string | null; readonly lastStep: number | null };

/** TOTP secrets, replay protection and recovery codes (RFC 6238; docs/security.md). */
export interface TotpRepo {
  get(userId: string): Promise<TotpState | undefined>;
  /** Stores a secret awaiting confirmation; false when TOTP is already on (or no such user). */
  setPending(userId: string, secret: string): Promise<boolean>;
  /**
   * Turns TOTP on with the pending secret `secret`, accepting time step `step`, and replaces the
   * recovery codes, in one transaction. False when that secret is no longer the pending one.
   */
  enable(userId: string, secret: string, step: number, recoveryHashes: readonly string[]): Promise<boolean>;
  /**
   * Records `step` as used: one conditional UPDATE that succeeds only when TOTP is on and no
   * step at or after it was used, so a code is accepted once across all nodes.
   */
  claimStep(userId: string, step: number): Promise<boolean>;
  /** Consumes a recovery code by its hash; false when it is unknown or already used. */
  useRecoveryCode(userId: string, codeHash: string): Promise<boolean>;
  recoveryCodesLeft(userId: string): Promise<number>;
  /** Turns TOTP off: secret, pending secret, last step and recovery codes go. */
  disable(userId: string): Promise<void>;
}
