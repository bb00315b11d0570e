import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MissingServerFields, type ChangeEntry } from './remote-feed.js';
import { isUnder, parentOf, type FileVersion } from './tree.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ChangesPage {
  readonly changes: ChangeEntry[];
  readonly cursor: string;
  readonly more: boolean;
  readonly epoch: string | undefined;
}

const enc = (p: string): string => p.split('/').filter(Boolean).map(encodeURIComponent).join('/');

export const reprDigest = (hex: string): string => `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`;

/**
 * The server, over its public HTTP API only (the same any client gets). Every write carries the
 * client's origin so the change feed's echo of it can be told apart.
 */
export class RemoteApi {
  private readonly rootUrl: string;
  /** The trash's files (`sha256:size`) as last listed; cleared by each feed page (trashHolds). */
  private trashed: Promise<Set<string>> | undefined;
  constructor(
    readonly server: string,
    private readonly key: string,
    /** `/<owner>/<path>` */
    readonly root: string,
    private readonly origin: string,
  ) {
    this.rootUrl = `${server.replace(/\/+$/, '')}/storage/${enc(root)}`;
  }

  fileUrl(rel: string): string {
    return `${this.rootUrl}/${enc(rel)}`;
  }

  private async call(url: string, init: RequestInit & { headers?: Record<string, string> } = {}, ok: number[] = []): Promise<Response> {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${this.key}`, 'file-cloud-origin': this.origin, ...init.headers } });
    if (res.ok || ok.includes(res.status)) return res;
    let code = 'http_error';
    let message = `${init.method ?? 'GET'} ${new URL(url).pathname}: HTTP ${res.status}`;
    try {
      const body = (await res.json()) as { error?: string; message?: string };
      if (body.error) code = body.error;
      if (body.message) message = `${message} ${body.error}: ${body.message}`;
    } catch {
      // not JSON: the status says enough
    }
    throw new HttpError(res.status, code, message);
  }

  /** Creates the server folder if it is missing. */
  async ensureRoot(): Promise<void> {
    const res = await this.call(`${this.rootUrl}/`, { method: 'HEAD' }, [404]);
    if (res.status !== 404) return;
    await this.call(`${this.rootUrl}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) }, [409]);
  }

  /** One folder's files and subfolders, with the sync fields; undefined when the folder is gone. */
  private async listFolder(rel: string): Promise<{ files: Map<string, FileVersion>; folders: string[] } | undefined> {
    const res = await this.call(rel === '' ? `${this.rootUrl}/` : `${this.fileUrl(rel)}/`, {}, [404]);
    if (res.status === 404) return undefined;
    const { entries } = (await res.json()) as { entries: { is_file: boolean; name: string; size: number; sha256?: string | null; id?: string | null; etag?: string | null }[] };
    const files = new Map<string, FileVersion>();
    const folders: string[] = [];
    for (const e of entries) {
      const p = rel === '' ? e.name.normalize('NFC') : `${rel}/${e.name.normalize('NFC')}`;
      if (!e.is_file) {
        folders.push(p);
        continue;
      }
      if (!('sha256' in e)) throw new MissingServerFields(`the server's listings carry no sha256 (it is older than this client): ${p}`);
      // null: the server has not hashed it yet (another tool put it there): the bytes say it.
      const sha256 = e.sha256 ?? (await this.hashOf(p));
      if (sha256 === undefined) continue; // gone meanwhile
      files.set(p, { sha256, size: e.size, id: e.id ?? undefined, etag: e.sha256 ? (e.etag ?? undefined) : undefined });
    }
    return { files, folders };
  }

  /** The whole tree below the root (or below `under`), one listing per folder. Only after a lost cursor. */
  async list(under = ''): Promise<Map<string, FileVersion>> {
    return (await this.listTree(under)).files;
  }

  /** The files and the folders below the root (or below `under`, which is not itself among the folders). */
  async listTree(under = ''): Promise<{ files: Map<string, FileVersion>; dirs: Set<string> }> {
    const files = new Map<string, FileVersion>();
    const dirs = new Set<string>();
    const walk = async (rel: string): Promise<void> => {
      const got = await this.listFolder(rel);
      if (!got) return;
      for (const [p, v] of got.files) files.set(p, v);
      for (const f of got.folders) {
        dirs.add(f);
        await walk(f);
      }
    };
    await walk(under);
    return { files, dirs };
  }

  /** Makes a folder (with its parents); one that exists already is no error. */
  async mkdir(rel: string): Promise<void> {
    await this.call(`${this.fileUrl(rel)}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) }, [409]);
  }

  /**
   * Removes a folder only while it holds nothing but the empty folders `below` (none: only while it
   * is empty): its listing's ETag (the tree ETag, which anything written beneath changes) is the
   * DELETE's If-Match, the listing must show no file and no other folder, and — as it does not show
   * what is deeper — the feed since `cursor` must name nothing at or below it that another client
   * wrote (what was written before the listing is in that feed, after it changes the ETag). A chain
   * goes with one listing, one feed page and one delete. false: something is in it now, or may be.
   */
  async rmdirIfEmpty(rel: string, below: readonly string[] = [], cursor?: string): Promise<boolean> {
    const res = await this.call(`${this.fileUrl(rel)}/`, {}, [404]);
    if (res.status === 404) return true;
    const { entries } = (await res.json()) as { entries: { name: string; is_file: boolean }[] };
    const etag = res.headers.get('etag');
    const children = new Set(below.filter((d) => parentOf(d) === rel));
    if (etag === null || entries.some((e) => e.is_file || !children.has(`${rel}/${e.name.normalize('NFC')}`))) return false;
    if (below.length > 0 && (cursor === undefined || !(await this.quietUnder(rel, cursor)))) return false;
    const del = await this.call(`${this.fileUrl(rel)}/`, { method: 'DELETE', headers: { 'if-match': etag } }, [404, 412]);
    return del.status !== 412;
  }

  /** Nobody else wrote at or below `rel` since `cursor`, as one page of the feed tells (a longer feed: not known). */
  private async quietUnder(rel: string, cursor: string): Promise<boolean> {
    const page = await this.changesPage(cursor);
    const folder = `${this.root}/${rel}`;
    const touches = (c: ChangeEntry): boolean => [c.path, c.from].some((p) => p !== undefined && isUnder(p.normalize('NFC'), folder));
    return !page.more && !page.changes.some((c) => c.origin !== this.origin && touches(c));
  }

  /** What the server holds at one path now (from its folder's listing), or undefined. */
  async stat(rel: string): Promise<FileVersion | undefined> {
    const i = rel.lastIndexOf('/');
    return (await this.listFolder(i < 0 ? '' : rel.slice(0, i)))?.files.get(rel);
  }

  /** A file's version from its bytes (the server has no hash of it yet); undefined when it is gone. */
  async versionOf(rel: string, id: string | undefined): Promise<FileVersion | undefined> {
    const got = await this.download(rel);
    if (!got) return undefined;
    const hash = createHash('sha256');
    let size = 0;
    for await (const c of got.body) {
      hash.update(c as Buffer);
      size += (c as Buffer).length;
    }
    return { sha256: hash.digest('hex'), size, id };
  }

  private async hashOf(rel: string): Promise<string | undefined> {
    const got = await this.download(rel);
    if (!got) return undefined;
    const hash = createHash('sha256');
    await pipeline(got.body, hash);
    return hash.digest('hex');
  }

  /**
   * Whether a kept version of the file at `rel` (the server's `--versions`) has exactly these bytes,
   * checked by hashing it: only versions of the same size, newest first (a replaced file's bytes are
   * its newest version), at most `limit` of them. false also when versions are off or the file is gone.
   */
  async versionHolds(rel: string, sha256: string, size: number, limit = 3): Promise<boolean> {
    const res = await this.call(`${this.fileUrl(rel)}?versions`, {}, [404, 409]);
    if (!res.ok) return false;
    const { versions } = (await res.json()) as { versions: { id: string; size: number }[] };
    for (const v of versions.filter((x) => x.size === size).slice(0, limit)) {
      const got = await this.call(`${this.fileUrl(rel)}?version=${encodeURIComponent(v.id)}`, {}, [404]);
      if (got.status === 404 || !got.body) continue;
      const hash = createHash('sha256');
      await pipeline(Readable.fromWeb(got.body as import('node:stream/web').ReadableStream), hash);
      if (hash.digest('hex') === sha256) return true;
    }
    return false;
  }

  /**
   * Whether the caller's server trash (`--trash-days`) holds a file with exactly these bytes — a
   * trashed file, or a file of a trashed folder — by the SHA-256 the server knew for exactly the bytes
   * trashed (GET /api/trash/hashes; a file whose hash it did not know counts as not held). One answer
   * until the next feed page: a delete arrives through the feed before the plan that removes the local
   * file, so the answer taken after it holds the item. false when the trash is off (or the server is
   * older than this route).
   */
  async trashHolds(sha256: string, size: number): Promise<boolean> {
    this.trashed ??= this.call(`${this.server.replace(/\/+$/, '')}/api/trash/hashes`, {}, [404]).then(async (res) => {
      if (!res.ok) return new Set<string>();
      const { files } = (await res.json()) as { files: { sha256: string; size: number }[] };
      return new Set(files.map((f) => `${f.sha256}:${f.size}`));
    });
    try {
      return (await this.trashed).has(`${sha256}:${size}`);
    } catch (e) {
      this.trashed = undefined; // the next step asks again
      throw e;
    }
  }

  /** One page of the change feed; `cursor` undefined asks for "now". 410 → HttpError cursor_expired. */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<ChangesPage> {
    this.trashed = undefined;
    return this.changesPage(cursor, signal);
  }

  /** A page read without taking it in (the trash listing stays as it was). */
  private async changesPage(cursor: string | undefined, signal?: AbortSignal): Promise<ChangesPage> {
    const q = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}&limit=1000`;
    const res = await this.call(`${this.server.replace(/\/+$/, '')}/api/changes${q}`, signal ? { signal } : {});
    const body = (await res.json()) as { changes: ChangeEntry[]; cursor: string; more: boolean; epoch?: string };
    return { changes: body.changes, cursor: body.cursor, more: body.more, epoch: body.epoch };
  }

  /** The file's bytes and the ETag they came with. */
  async download(rel: string): Promise<{ body: Readable; etag: string | undefined } | undefined> {
    const res = await this.call(this.fileUrl(rel), {}, [404]);
    if (res.status === 404 || !res.body) return undefined;
    return { body: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), etag: res.headers.get('etag') ?? undefined };
  }

  /**
   * PUT with `If-Match: etag` (replace exactly that version) or `If-None-Match: *` (a new name), and
   * the bytes' digest, so a file that changes while it is read is refused rather than stored torn.
   * undefined: a precondition failed (412) or the bytes changed underway (digest_mismatch).
   */
  async upload(rel: string, body: Readable, size: number, sha256: string, cond: { ifMatch: string } | { ifNoneMatch: true }): Promise<FileVersion | undefined> {
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      'content-length': String(size),
      'repr-digest': reprDigest(sha256),
      ...('ifMatch' in cond ? { 'if-match': cond.ifMatch } : { 'if-none-match': '*' }),
    };
    let res: Response;
    try {
      res = await this.call(this.fileUrl(rel), { method: 'PUT', headers, body: Readable.toWeb(body) as ReadableStream, duplex: 'half' } as RequestInit & { headers: Record<string, string> });
    } catch (e) {
      if (e instanceof HttpError && (e.status === 412 || e.code === 'digest_mismatch')) return undefined;
      throw e;
    }
    const answer = (await res.json()) as { sha256?: string; id?: string; files?: { sha256?: string; id?: string }[] };
    const file = answer.files?.[0] ?? answer;
    if (typeof file.sha256 !== 'string') throw new MissingServerFields(`the server's PUT answer carries no sha256 (it is older than this client): ${rel}`);
    if (file.sha256 !== sha256) return undefined;
    return { sha256: file.sha256, size, id: file.id, etag: res.headers.get('etag') ?? undefined };
  }

  /** false: a precondition failed (the file changed since `etag`). A file already gone counts as deleted. */
  async delete(rel: string, etag: string): Promise<boolean> {
    const res = await this.call(this.fileUrl(rel), { method: 'DELETE', headers: { 'if-match': etag } }, [404, 412]);
    return res.status !== 412;
  }

  /** false: a precondition failed or the destination is taken. Without `etag`: a folder, moved whole. */
  async move(from: string, to: string, etag: string | undefined): Promise<boolean> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(etag === undefined ? {} : { 'if-match': etag }) };
    const res = await this.call(
      this.fileUrl(from),
      { method: 'POST', headers, body: JSON.stringify({ action: 'Move', new_path: `${this.root}/${to}` }) },
      [409, 412, 404],
    );
    return res.status === 204;
  }
}
