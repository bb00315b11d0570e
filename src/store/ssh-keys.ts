/** A public key for SFTP sign-in (CONTRACT "SFTP (opt-in)", 0027_ssh_keys). */
export type SshKey = {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  /** The key type as SSH names it: ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa … */
  readonly algorithm: string;
  /** The key's SSH wire blob, base64 (the middle field of an authorized_keys line). */
  readonly publicKey: string;
  /** `SHA256:` and the unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  readonly createdAt: number;
  /** Undefined: never used. Updated at most about once a minute. */
  readonly lastUsedAt: number | undefined;
};

export interface SshKeyRepo {
  /** Adds the key; rejects (unique index) when the user has this fingerprint already. */
  create(k: SshKey): Promise<void>;
  /** The user's keys, oldest first. */
  listByUser(userId: string): Promise<SshKey[]>;
  /** The user's key with this fingerprint, if any. */
  find(userId: string, fingerprint: string): Promise<SshKey | undefined>;
  /** Deletes the key if `userId` owns it; false otherwise (unknown or someone else's). */
  delete(id: string, userId: string): Promise<boolean>;
  /** Records a use at `now` unless one was recorded after `notBefore`. */
  touch(id: string, now: number, notBefore: number): Promise<void>;
}
