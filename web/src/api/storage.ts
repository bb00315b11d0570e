import { responseError, type ApiClient } from './client';
import { ApiError, networkError } from './errors';
import { movePath, storageUrl, type Segments } from './paths';
import { ThumbnailLoader } from './thumbnails';
import { t } from '../lib/i18n';

/** One entry of a folder listing (CONTRACT "GET / HEAD"). */
export type Entry = { readonly is_file: boolean; readonly name: string; readonly size: number; readonly modified: string };

export type PathToken = { token: string; expiresAt: Date };

/** The storage API of one signed-in user, over an ApiClient. */
export class StorageApi {
  constructor(
    readonly client: ApiClient,
    readonly user: string,
  ) {}

  private thumbnailLoader: ThumbnailLoader | undefined;

  /** Thumbnails of this user's images, loaded with the token and kept as object URLs. */
  get thumbnails(): ThumbnailLoader {
    // Made on first use: a field initializer would run before the constructor has set `client`.
    return (this.thumbnailLoader ??= new ThumbnailLoader(this.client, (path) => this.url(path)));
  }

  url(segments: Segments, folder = false): string {
    return storageUrl(this.user, segments, folder);
  }

  async list(folder: Segments, signal?: AbortSignal): Promise<Entry[]> {
    const body = await this.client.json<{ entries: Entry[] }>(this.url(folder, true), { signal });
    return body.entries;
  }

  async createFolder(path: Segments): Promise<void> {
    await this.client.request(this.url(path), { method: 'POST', json: { action: 'CreateFolder' } });
  }

  async move(from: Segments, to: Segments, overwrite = false): Promise<void> {
    await this.client.request(this.url(from), { method: 'POST', json: { action: 'Move', new_path: movePath(this.user, to), overwrite } });
  }

  /** Copies a file or folder to `to` (Copy: the parents are made; a taken name is refused unless `overwrite`). */
  async copy(from: Segments, to: Segments, overwrite = false): Promise<void> {
    await this.client.request(this.url(from), { method: 'POST', json: { action: 'Copy', new_path: movePath(this.user, to), overwrite } });
  }

  async remove(path: Segments): Promise<void> {
    await this.client.request(this.url(path), { method: 'DELETE' });
  }

  /** A path token for exactly `path`; without `validForSeconds` the server's default (its maximum). */
  async makeToken(path: Segments, validForSeconds?: number): Promise<PathToken> {
    const json: Record<string, unknown> = { action: 'MakePathToken' };
    if (validForSeconds !== undefined) json.valid_for_seconds = validForSeconds;
    const requested = Date.now();
    const res = await this.client.request(this.url(path), { method: 'POST', json });
    const { token } = (await res.json()) as { token: string };
    return { token, expiresAt: tokenExpiry(token, res.headers.get('x-expires-at'), requested, validForSeconds) };
  }

  /** A URL that reads `path` with a path token (no session needed), optionally as a download. */
  tokenUrl(path: Segments, token: string, download = false): string {
    return `${this.url(path)}?token=${encodeURIComponent(token)}${download ? '&download=1' : ''}`;
  }

  /** A URL that downloads the folder (or only the named entries of it) as a zip, with a path token for that folder. */
  zipUrl(folder: Segments, token: string, names?: readonly string[]): string {
    const q = new URLSearchParams({ zip: '1' });
    for (const n of names ?? []) q.append('name', n);
    q.append('token', token);
    return `${this.url(folder, true)}?${q.toString().replace(/\+/g, '%20')}`;
  }

  /**
   * The whole file as UTF-8 text with its ETag, for the editor. A file that
   * is not valid UTF-8 is refused rather than mangled by a save.
   */
  async readForEdit(path: Segments, signal?: AbortSignal): Promise<{ text: string; etag: string }> {
    const res = await this.client.request(this.url(path), { signal });
    const etag = res.headers.get('etag') ?? '';
    const bytes = await res.arrayBuffer();
    try {
      return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), etag };
    } catch {
      throw new ApiError(0, 'not_text', t('editor.notText'));
    }
  }

  /**
   * Saves text over the file only while it is still the version `etag`
   * names (If-Match): someone else's change meanwhile → ApiError 412, nothing
   * overwritten. Returns the new version's ETag.
   */
  async saveText(path: Segments, text: string, etag: string): Promise<string> {
    const res = await this.client.request(this.url(path), { method: 'PUT', body: new Blob([text]), headers: { 'content-type': 'text/plain; charset=utf-8', 'if-match': etag } });
    return res.headers.get('etag') ?? '';
  }

  /** Saves text as a new file in `folder` named `name`, or `name (1).ext` … when taken; returns the name it got. */
  async saveCopy(folder: Segments, name: string, text: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), name);
    const res = await this.client.request(this.url(folder, true), { method: 'PUT', body: form });
    const body = (await res.json()) as { files_written: string[] };
    return body.files_written[0] ?? name;
  }

  /**
   * Reads at most `maxBytes` of a file as text through a path-token URL (a
   * Range request, so a huge file is not fetched whole).
   */
  async readText(url: string, maxBytes: number, signal?: AbortSignal): Promise<{ text: string; truncated: boolean }> {
    let res: Response;
    try {
      res = await fetch(url, { headers: { range: `bytes=0-${maxBytes - 1}` }, signal, cache: 'no-store' });
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e;
      throw networkError();
    }
    if (!res.ok) throw await responseError(res);
    const buf = await res.arrayBuffer();
    const total = totalFromContentRange(res.headers.get('content-range'));
    const truncated = res.status === 206 ? total === undefined || total > buf.byteLength : buf.byteLength > maxBytes;
    const bytes = new Uint8Array(buf, 0, Math.min(buf.byteLength, maxBytes));
    return { text: new TextDecoder('utf-8', { fatal: false }).decode(bytes), truncated };
  }
}

function totalFromContentRange(v: string | null): number | undefined {
  const m = v ? /\/(\d+)$/.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}

/** The expiry of a path token: the server's X-Expires-At, else the one the token carries, else what was asked for. */
function tokenExpiry(token: string, header: string | null, requestedAt: number, validFor: number | undefined): Date {
  const fromHeader = header ? Date.parse(header) : NaN;
  if (!Number.isNaN(fromHeader)) return new Date(fromHeader);
  const m = /^fcp1\.(\d+)\./.exec(token);
  if (m) return new Date(Number(m[1]) * 1000);
  return new Date(requestedAt + (validFor ?? 86400) * 1000);
}
