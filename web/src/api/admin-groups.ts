import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** A group as the admin groups API gives it (docs/api.md "Groups"). */
export type Group = { readonly name: string; readonly members: readonly string[]; readonly created_at: string };

const groupUrl = (name: string) => withBase(`/api/admin/groups/${encodeURIComponent(name)}`);

/** Group management for admins (403 `forbidden` for everyone else). Each change is all or nothing on the server. */
export class AdminGroupsApi {
  constructor(private readonly client: ApiClient) {}

  async list(signal?: AbortSignal): Promise<Group[]> {
    return (await this.client.json<{ groups: Group[] }>(withBase('/api/admin/groups'), { signal })).groups;
  }

  async create(name: string, members: readonly string[]): Promise<Group> {
    return this.client.json<Group>(withBase('/api/admin/groups'), { method: 'POST', json: { name, members } });
  }

  async change(name: string, change: { add?: readonly string[]; remove?: readonly string[] }): Promise<Group> {
    return this.client.json<Group>(groupUrl(name), { method: 'PATCH', json: change });
  }

  async remove(name: string): Promise<void> {
    await this.client.request(groupUrl(name), { method: 'DELETE' });
  }
}

/** "bea, carl  dora" → ["bea", "carl", "dora"]: names a person types, each once. */
export const memberNames = (text: string): string[] => [...new Set(text.split(/[\s,]+/).filter((s) => s !== ''))];
