import { withBase } from '../lib/base';
import type { ApiClient } from './client';
import { movePath, type Segments } from './paths';

export type Permission = 'read' | 'write';

/** A grant as its owner sees it (docs/api.md "Grants"). */
export type Grant = {
  readonly id: string;
  /** `/<owner>/<path>` of the shared item. */
  readonly path: string;
  /** `user:<name>` or `group:<name>`. */
  readonly to: string;
  readonly permission: Permission;
  readonly created_at: string;
};

/** An item another account shared with the signed-in user (`GET /api/grants/received`). */
export type ReceivedGrant = {
  readonly id: string;
  /** `/<owner>/<path>` of the item, reached at `/storage/<owner>/<path>`. */
  readonly path: string;
  readonly owner: string;
  readonly permission: Permission;
  readonly is_file: boolean;
  /** The user's groups it is shared with (it comes through them). */
  readonly groups?: readonly string[];
  /** Shared with the user by name (too). */
  readonly direct?: boolean;
};

/** Sharing between accounts: the signed-in user's grants of their own items. */
export class GrantsApi {
  constructor(
    private readonly client: ApiClient,
    private readonly user: string,
  ) {}

  /** The grants of one item, oldest first. */
  async of(path: Segments, signal?: AbortSignal): Promise<Grant[]> {
    const all = (await this.client.json<{ grants: Grant[] }>(withBase('/api/grants'), { signal })).grants;
    const here = movePath(this.user, path);
    return all.filter((g) => g.path === here).reverse();
  }

  /** Every grant the signed-in user gave, newest first. */
  async given(signal?: AbortSignal): Promise<Grant[]> {
    return (await this.client.json<{ grants: Grant[] }>(withBase('/api/grants'), { signal })).grants;
  }

  /** What others shared with the signed-in user. */
  async received(signal?: AbortSignal): Promise<ReceivedGrant[]> {
    return (await this.client.json<{ grants: ReceivedGrant[] }>(withBase('/api/grants/received'), { signal })).grants;
  }

  /** `to` as typed: a name is a user, `group:<name>` a group. */
  async create(path: Segments, to: string, permission: Permission): Promise<Grant> {
    const recipient = /^(user|group):/.test(to) ? to : `user:${to}`;
    return this.client.json<Grant>(withBase('/api/grants'), { method: 'POST', json: { path: movePath(this.user, path), to: recipient, permission } });
  }

  async setPermission(id: string, permission: Permission): Promise<Grant> {
    return this.client.json<Grant>(withBase(`/api/grants/${encodeURIComponent(id)}`), { method: 'PATCH', json: { permission } });
  }

  async remove(id: string): Promise<void> {
    await this.client.request(withBase(`/api/grants/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }
}
