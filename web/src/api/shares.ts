import { publicUrlOf, withBase } from '../lib/base';
import type { ApiClient } from './client';
import { movePath, type Segments } from './paths';

/** A share link as the server describes it (CONTRACT "Share links"). */
export type Share = {
  readonly id: string;
  /** `/s/<id>`, without the base path. */
  readonly url: string;
  /** `/<user>/<path>` of the shared file or folder. */
  readonly path: string;
  readonly is_file: boolean;
  /** ISO date, or null for a link that never expires. */
  readonly expires_at: string | null;
  readonly has_password: boolean;
  readonly max_downloads: number | null;
  readonly downloads: number;
  readonly upload_only: boolean;
  readonly created_at: string;
};

export type NewShare = {
  /** Seconds from now; null = never. */
  expiresIn: number | null;
  password?: string;
  maxDownloads?: number;
  uploadOnly?: boolean;
};

/** The share-link API of the signed-in user: create, list, revoke. */
export class SharesApi {
  constructor(
    private readonly client: ApiClient,
    private readonly user: string,
  ) {}

  async create(path: Segments, opts: NewShare): Promise<Share> {
    const json: Record<string, unknown> = { path: movePath(this.user, path), expires_in: opts.expiresIn };
    if (opts.password) json.password = opts.password;
    if (opts.maxDownloads !== undefined) json.max_downloads = opts.maxDownloads;
    if (opts.uploadOnly) json.upload_only = true;
    return this.client.json<Share>(withBase('/api/shares'), { method: 'POST', json });
  }

  async list(signal?: AbortSignal): Promise<Share[]> {
    return (await this.client.json<{ shares: Share[] }>(withBase('/api/shares'), { signal })).shares;
  }

  async revoke(id: string): Promise<void> {
    await this.client.request(withBase(`/api/shares/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }
}

/** The absolute address to hand out: the public URL (or this origin) plus the base path plus `/s/<id>`. */
export const shareLink = (share: Pick<Share, 'id'>): string => publicUrlOf(withBase(`/s/${encodeURIComponent(share.id)}`));

/** The shared item's path inside the owner's storage, as segments (the `/<user>/` prefix dropped). */
export function shareSegments(share: Pick<Share, 'path'>): string[] {
  return share.path.split('/').filter((s) => s !== '').slice(1);
}
