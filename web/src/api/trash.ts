import { withBase } from '../lib/base';
import type { ApiClient } from './client';
import type { Segments } from './paths';
import type { StorageApi } from './storage';

/** An item of the signed-in user's trash (`GET /api/trash`, docs/api.md "Trash"). */
export type TrashItem = {
  readonly id: string;
  /** `/<owner>/<path>` where it was. */
  readonly path: string;
  readonly name: string;
  readonly is_file: boolean;
  readonly size: number;
  /** A file's SHA-256 when the server knew it for exactly the bytes trashed; null for folders and unknown ones. */
  readonly sha256: string | null;
  readonly deleted_at: string;
  readonly expires_at: string;
};

/** The trash, when the server keeps one (`--trash-days`). */
export class TrashApi {
  constructor(private readonly client: ApiClient) {}

  async list(signal?: AbortSignal): Promise<TrashItem[]> {
    return (await this.client.json<{ items: TrashItem[] }>(withBase('/api/trash'), { signal })).items;
  }

  /** Puts an item back; returns the `/<owner>/<path>` it took (a suffix when its name is taken now). */
  async restore(id: string): Promise<string> {
    return (await this.client.json<{ path: string }>(withBase(`/api/trash/${encodeURIComponent(id)}/restore`), { method: 'POST' })).path;
  }

  async remove(id: string): Promise<void> {
    await this.client.request(withBase(`/api/trash/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }

  async empty(): Promise<void> {
    await this.client.request(withBase('/api/trash'), { method: 'DELETE' });
  }
}

/** An earlier content of a file (`?versions`, docs/api.md "Versions"). */
export type FileVersion = { readonly id: string; readonly size: number; readonly modified: string };

/** A file's versions, when the server keeps them (`--versions`). */
export class VersionsApi {
  constructor(private readonly storage: StorageApi) {}

  async list(path: Segments, signal?: AbortSignal): Promise<FileVersion[]> {
    return (await this.storage.client.json<{ versions: FileVersion[] }>(`${this.storage.url(path)}?versions`, { signal })).versions;
  }

  async restore(path: Segments, id: string): Promise<void> {
    await this.storage.client.request(this.storage.url(path), { method: 'POST', json: { action: 'restore_version', version: id } });
  }

  /** A download URL of one version (without an id: the file as it is now), with a path token for the file (never the access token in a URL). */
  async downloadUrl(path: Segments, id?: string): Promise<string> {
    return this.tokenUrl(path, id, true);
  }

  /** The first `maxBytes` of one version (or, without an id, of the file as it is now) as text, for a preview. */
  async readText(path: Segments, id: string | undefined, maxBytes: number, signal?: AbortSignal): Promise<{ text: string; truncated: boolean }> {
    return this.storage.readText(await this.tokenUrl(path, id, false), maxBytes, signal);
  }

  private async tokenUrl(path: Segments, id: string | undefined, download: boolean): Promise<string> {
    const { token } = await this.storage.makeToken(path, 600);
    const url = this.storage.tokenUrl(path, token, download);
    return id === undefined ? url : `${url}&version=${encodeURIComponent(id)}`;
  }
}
