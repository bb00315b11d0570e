import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** A user as the admin users API describes them (CONTRACT "Accounts and API"). */
export type User = {
  readonly username: string;
  readonly admin: boolean;
  readonly disabled: boolean;
  /** Bytes stored. */
  readonly used: number;
  /** Bytes allowed, or null for no quota. */
  readonly quota: number | null;
  /** Two-step verification is on. */
  readonly totp: boolean;
  readonly created_at: string;
  /** How the user signs in: a password, or single sign-on through the OpenID provider. */
  readonly sign_in?: 'password' | 'sso';
  /** Keeps password sign-in under --oidc-only. */
  readonly local?: boolean;
};

/** What `PATCH /api/admin/users/<name>` may change; absent fields stay as they are. */
export type UserChange = { password?: string; admin?: boolean; quota?: number | null; disabled?: boolean };

export type NewUser = { username: string; password: string; admin: boolean };

const userUrl = (name: string) => withBase(`/api/admin/users/${encodeURIComponent(name)}`);

/** User management for admins (403 `forbidden` for everyone else), with the CLI's rules: the last admin stays. */
export class AdminUsersApi {
  constructor(private readonly client: ApiClient) {}

  async list(signal?: AbortSignal): Promise<User[]> {
    return (await this.client.json<{ users: User[] }>(withBase('/api/admin/users'), { signal })).users;
  }

  async create(user: NewUser): Promise<void> {
    const json: Record<string, unknown> = { username: user.username, password: user.password };
    if (user.admin) json.admin = true;
    await this.client.request(withBase('/api/admin/users'), { method: 'POST', json });
  }

  async update(name: string, change: UserChange): Promise<void> {
    await this.client.request(userUrl(name), { method: 'PATCH', json: change });
  }

  /** Removes the user; their files stay on the server unless `deleteFiles`. */
  async remove(name: string, deleteFiles: boolean): Promise<void> {
    await this.client.request(deleteFiles ? `${userUrl(name)}?delete_files=true` : userUrl(name), { method: 'DELETE' });
  }
}
