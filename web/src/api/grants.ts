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
