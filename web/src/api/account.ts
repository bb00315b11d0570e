import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** The signed-in user as `GET /api/me` describes them (CONTRACT "Accounts and API"). */
export type Me = {
  readonly username: string;
  readonly admin: boolean;
  /** Bytes stored. */
  readonly used: number;
  /** Bytes allowed, or null for no quota. */
  readonly quota: number | null;
  /** Whether sign-in needs a TOTP code. */
  readonly totp: boolean;
  /** Days deleted items stay in the trash (--trash-days); 0: no trash, deletions are permanent. */
  readonly trash_days?: number;
  /** Replaced files keep their earlier contents (--versions). */
  readonly versions?: boolean;
  /** The groups the user is in, by name. */
  readonly groups?: readonly string[];
};

/** One signed-in session of the caller (`GET /api/sessions`). */
export type Session = {
  readonly id: string;
  readonly created_at: string;
  /** Recorded at each refresh and at most once a minute from access-token use. */
  readonly last_used_at: string;
  /** The User-Agent it signed in with, or null. */
  readonly client: string | null;
  /** The client address it signed in from (or was last used from), or null. */
  readonly address: string | null;
  /** The session this page is using. */
  readonly current: boolean;
};

/** `POST /api/me/totp`: a new secret, not yet in force until confirmed with a code. */
export type TotpSetup = { readonly secret: string; readonly otpauth_url: string };

/** The caller's own account: who they are, their password, sessions and second factor. */
export class AccountApi {
  constructor(private readonly client: ApiClient) {}

  me(signal?: AbortSignal): Promise<Me> {
    return this.client.json<Me>(withBase('/api/me'), { signal });
  }

  /** Other sessions and all path tokens stop working; this one stays signed in. */
  async changePassword(currentPassword: string, newPassword: string): Promise<void> {
    await this.client.request(withBase('/api/me/password'), { method: 'POST', json: { current_password: currentPassword, new_password: newPassword } });
  }

  async sessions(signal?: AbortSignal): Promise<Session[]> {
    return (await this.client.json<{ sessions: Session[] }>(withBase('/api/sessions'), { signal })).sessions;
  }

  async revokeSession(id: string): Promise<void> {
    await this.client.request(withBase(`/api/sessions/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }

  /** Starts TOTP set-up: a fresh secret, shown as a QR code and as text. */
  totpBegin(): Promise<TotpSetup> {
    return this.client.json<TotpSetup>(withBase('/api/me/totp'), { method: 'POST' });
  }

  /** Turns TOTP on with a code from the app; answers the recovery codes, shown this once. */
  async totpConfirm(code: string): Promise<string[]> {
    const body = await this.client.json<{ recovery_codes?: string[] }>(withBase('/api/me/totp/confirm'), { method: 'POST', json: { code } });
    return body.recovery_codes ?? [];
  }

  /** Turns TOTP off; needs a current code (or a recovery code). */
  async totpDisable(code: string): Promise<void> {
    await this.client.request(withBase('/api/me/totp'), { method: 'DELETE', json: { code } });
  }
}
