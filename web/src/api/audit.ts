import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** One audit log entry as GET /api/admin/audit gives it (docs/api.md "Audit log"). */
export type AuditEvent = {
  readonly id: number;
  readonly time: string;
  readonly type: string;
  readonly actor: string | null;
  readonly address: string | null;
  readonly user_agent: string | null;
  readonly target: string | null;
  readonly outcome: 'success' | 'denied' | 'failure';
  readonly detail: Readonly<Record<string, unknown>> | null;
  readonly prev_hash: string;
  readonly hash: string;
};

export type AuditFilter = { readonly user?: string; readonly type?: string };

/** The audit log, for admins (403 `forbidden` for everyone else), newest first, a page at a time. */
export class AuditApi {
  constructor(private readonly client: ApiClient) {}

  async page(filter: AuditFilter, cursor: string | null, signal?: AbortSignal): Promise<{ events: AuditEvent[]; cursor: string | null }> {
    const q = new URLSearchParams({ limit: '50' });
    if (filter.user) q.set('user', filter.user);
    if (filter.type) q.set('type', filter.type);
    if (cursor) q.set('cursor', cursor);
    return this.client.json<{ events: AuditEvent[]; cursor: string | null }>(withBase(`/api/admin/audit?${q.toString()}`), { signal });
  }
}
