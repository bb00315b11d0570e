import type { Readable } from 'node:stream';
import { decide as decideAccess, SHARE_LINK, SHARE_PAGE, STORAGE_READ, type AccessRule, type GrantAccess, type Resource } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { writerOf, type Principal } from '../domain/principal.js';
import { isRoot, keyId, keyParent, type StorageKey } from '../domain/storage-path.js';
import type { ByteRange, Entry, IndexedKind, WriteLook } from '../storage/backend.js';
import type { WritePreconditions } from '../lib/conditional.js';
import type { ThumbnailSize } from '../thumbnails/sizes.js';
import type { FilesService, UploadPart, WriteFileOptions } from './files.js';
import type { DavConditions, DavService } from './dav.js';
import type { GrantService } from './grants.js';
import { deadLink, type LiveShare, type ShareService, type SharePlace } from './shares.js';
import type { ThumbnailService } from './thumbnails.js';
import type { VersionService } from './versions.js';
import type { ZipService } from './zip.js';
import type { Door, MayOptions, SharedItem } from './door.js';

/** The services above name the layer by what they use of it (door.ts): it must go on offering that. */
type Implements<T extends Door> = T;
export type Operations = Implements<ReturnType<typeof createOperations>>;
/** The file operations of one principal: what every front end calls (see `createOperations`). */
export type PrincipalOperations = PrincipalOps;

/** A write with no WebDAV `If` header and no lock token: a lock in the way refuses it (423). */
const NO_LOCK_TOKENS: DavConditions = { header: undefined, tokens: new Set(), resources: new Map() };

/** The rule a key named anywhere but the URL is asked under: a signed-in account, through a grant where one reaches it. */
const ACCOUNT: AccessRule = { who: 'user' };

/**
 * The rule a principal's keys are asked under unless the front end names another: a share link's
 * visitor is held to the link's kind and password (an upload-only link reads nothing, a locked one
 * nothing until unlocked), a path token to reading exactly its own path, an account to its tree and grants.
 */
export const ruleFor = (principal: Principal): AccessRule => (principal.kind === 'share' ? SHARE_LINK : principal.kind === 'pathToken' ? STORAGE_READ : ACCOUNT);


/**
 * The one door (docs/architecture.md): every front end — the storage API, WebDAV, tus, search,
 * share-link and grant creation, the /basic/ pages — performs file operations as a principal
 * (`operations.as(principal)`), and every operation asks `decide` (src/domain/access.ts) for each key
 * it takes, with the grant that reaches that key: the URL's key and every other key a request names
 * (a Move's or Copy's destination, a tus folder, a search scope, a place in `Shared with me`). A
 * refusal is the contract's error (AppError); front ends translate only what their protocol answers
 * otherwise (WebDAV's 403 for a Destination outside every writable tree). `decide` is injectable so a
 * table test can watch every key asked.
 */
/** What `createOperations` is built from. */
type LayerDeps = {
  files: FilesService;
  grants: Pick<GrantService, 'access' | 'sharedItems'>;
  versions: Pick<VersionService, 'read' | 'list'>;
  thumbnails: Pick<ThumbnailService, 'get'>;
  zips: Pick<ZipService, 'plan'>;
  /**
   * The WebDAV service, for the writes WebDAV locks bind (`withLocks`); a getter, as that service
   * asks this layer's `may` itself and is built after it.
   */
  dav?: () => Pick<DavService, 'put' | 'redate' | 'delete' | 'mkcol' | 'copyOrMove'>;
  /** The share links, for what a link's visitor does (`visit`, `openLink`, `uploadToLink`); a getter, as that service asks this layer's `may` itself. */
  shares?: () => Pick<ShareService, 'open' | 'upload' | 'previewText'>;
  decide?: typeof decideAccess;
};

/** What every principal's operations share: the services, `decide`, and the layer's own `may`. */
type Layer = {
  readonly deps: LayerDeps;
  readonly files: FilesService;
  readonly decide: typeof decideAccess;
  may(principal: Principal, key: StorageKey, method: string, opts?: MayOptions, grantOf?: GrantService['access']): Promise<GrantAccess | undefined>;
  dav(): Pick<DavService, 'put' | 'redate' | 'delete' | 'mkcol' | 'copyOrMove'>;
  shares(): Pick<ShareService, 'open' | 'upload' | 'previewText'>;
};

export function createOperations(deps: LayerDeps) {
  const { files } = deps;
  const decide = deps.decide ?? decideAccess;
  /** May `principal` do `method` on `key`? The grant it goes through, if any; else the refusal, thrown. */
  async function may(principal: Principal, key: StorageKey, method: string, opts: MayOptions = {}, grantOf = deps.grants.access): Promise<GrantAccess | undefined> {
    const grant = opts.throughGrants === false ? undefined : await grantOf(principal, key);
    const denial = decide(opts.rule ?? ruleFor(principal), principal, method, { kind: 'storage', key, trailingSlash: false }, grant);
    if (denial) throw new AppError(denial.code, denial.message);
    return grant;
  }
  const layer: Layer = {
    deps,
    files,
    decide,
    may,
    dav() {
      const dav = deps.dav?.();
      if (!dav) throw new Error('The operation layer was built without the WebDAV service its lock-bound writes need.');
      return dav;
    },
    shares() {
      const shares = deps.shares?.();
      if (!shares) throw new Error('The operation layer was built without the share service a link\'s visitor needs.');
      return shares;
    },
  };

  return {
    may,

    /**
     * The operations of one principal, for one request (or one protocol command): keep it no longer.
     * A class, its methods on the prototype: made for every request, it is one small object, not the
     * sixty closures an object literal of arrow functions was (docs/performance.md, "What a 4 KiB GET allocates").
     */
    as(principal: Principal): PrincipalOps {
      return new PrincipalOps(layer, principal);
    },
  };
}

/**
 * The file operations of one principal (see `createOperations`): every one asks `decide` for each key
 * it takes (`may`), then the service below acts.
 */
export class PrincipalOps {
  readonly maxUploadBytes: number | undefined;
  /**
   * A read asks for its key at each step (stat, digest, open); the grant that reaches a key is
   * looked up once for these operations, which live as long as the request they serve.
   */
  private grantsSeen: Map<string, Promise<GrantAccess | undefined>> | undefined;
  private readonly grantOf = (p: Principal | undefined, key: StorageKey): Promise<GrantAccess | undefined> => {
    const id = keyId(key);
    const seen = (this.grantsSeen ??= new Map());
    let found = seen.get(id);
    if (!found) seen.set(id, (found = this.layer.deps.grants.access(p, key)));
    return found;
  };

  constructor(
    private readonly layer: Layer,
    readonly principal: Principal,
  ) {
    this.maxUploadBytes = layer.files.maxUploadBytes;
  }

  private get writer() {
    return writerOf(this.principal);
  }

  /** `decide`'s answer for `method` on `key` under the principal's rule (or `opts.rule`): the grant it goes through, else the refusal, thrown. */
  may(key: StorageKey, method: string, opts?: MayOptions): Promise<GrantAccess | undefined> {
    return this.layer.may(this.principal, key, method, opts, this.grantOf);
  }

  /** The link a visitor's principal holds, after `decide` let them `method` under `rule`; anyone else is told the link is dead. */
  private link(rule: AccessRule, method: string) {
    const { principal } = this;
    if (principal.kind !== 'share') throw deadLink();
    const denial = this.decideOn(rule, method);
    if (denial) throw new AppError(denial.code, denial.message);
    return principal.share;
  }

  private decideOn(rule: AccessRule, method: string) {
    const { principal } = this;
    const here: Resource = principal.kind === 'share' ? { kind: 'share', id: principal.shareId, rest: undefined } : { kind: 'none' };
    return this.layer.decide(rule, principal, method, here);
  }

  // A share link's visitor. What the link lets them do is `decide`'s answer for the link's own rules
  // (src/domain/access.ts: its kind, its password), asked here for every front end (the link's API,
  // its pages, the fast read path); each key they then read is asked again under `ruleFor`.
  /** Where `segments` lead below the link, for a visitor who may read it (else the link's refusal). */
  async openLink(segments: readonly string[]): Promise<SharePlace> {
    return this.layer.shares().open(this.link(SHARE_LINK, 'GET'), segments);
  }
  /**
   * What a link's page shows at `segments`: its password form (password_required, thrown, before
   * anything is looked at, so a locked link tells nothing), what is there for a link that reads
   * (`place`), or the drop zone of one that only takes uploads (`live`: nothing below it is looked at).
   */
  async visit(segments: readonly string[]): Promise<{ readonly may: 'read'; readonly place: SharePlace } | { readonly may: 'upload'; readonly live: LiveShare }> {
    const share = this.link(SHARE_PAGE, 'GET');
    const reading = this.decideOn(SHARE_LINK, 'GET');
    if (!reading) return { may: 'read', place: await this.layer.shares().open(share, segments) };
    if (this.decideOn(SHARE_LINK, 'PUT')) throw new AppError(reading.code, reading.message);
    return { may: 'upload', live: (await this.layer.shares().open(share, [])).live };
  }
  /** A visitor's upload below an upload-only link: new files only, under a folder of its own (shares.upload). */
  async uploadToLink(segments: readonly string[], parts: AsyncIterable<UploadPart>): Promise<void> {
    const shares = this.layer.shares();
    const { live } = await shares.open(this.link(SHARE_LINK, 'PUT'), []);
    // The link's own folder, which takes the upload's folder, is asked as any key written is.
    await this.may(live.key, 'PUT');
    await shares.upload(live, segments, parts);
  }
  /** The first bytes of a file as text, for a share page's preview. */
  async previewText(key: StorageKey, entry: Entry) {
    await this.may(key, 'GET');
    return this.layer.shares().previewText(key, entry);
  }

  async stat(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.stat(key);
  }
  async statOrThrow(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.statOrThrow(key);
  }
  async listSorted(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.listSorted(key);
  }
  /** As `listSorted`, every member with its ETag (a WebDAV PROPFIND's listing). */
  async listWithEtags(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.listSorted(key, { etags: true });
  }
  /**
   * The items others share with the principal (what `Shared with me` lists, on WebDAV and SFTP, and
   * what a search without a folder looks in), each with its root key: those `decide` lets them read.
   */
  async sharedWithMe(): Promise<SharedItem[]> {
    const { principal, layer } = this;
    const items = await layer.deps.grants.sharedItems(principal);
    return items.filter((i) => layer.decide(ruleFor(principal), principal, 'GET', { kind: 'storage', key: i.root, trailingSlash: false }, i.access) === undefined);
  }

  /**
   * Before a client starts a write it sends in parts (an SFTP handle): `decide` is asked for
   * the write now, not at its end; what is at the key (a file, a folder or nothing), and
   * whether its parent is a folder, looked at where the write itself looks; `look` is all that,
   * for `withLocks.put` when the write starts at once.
   */
  async lookBeforeWrite(key: StorageKey): Promise<{ existing: IndexedKind | undefined; parentIsFolder: boolean; look: WriteLook }> {
    const { files } = this.layer;
    await this.may(key, 'PUT');
    const { at, parent } = await files.lookBeforeWrite(key);
    // A user's root exists from their first request on: files.stat makes it (a first upload into it).
    const parentIsFolder = at !== undefined || parent === 'folder' || (isRoot(keyParent(key)) && parent === undefined && !(await files.stat(keyParent(key))).isFile);
    return { existing: at, parentIsFolder, look: { at, parent: parentIsFolder ? 'folder' : parent } };
  }

  /**
   * The writes of WebDAV, for a front end that holds no lock token (SFTP): a WebDAV lock on
   * the key (or a folder above it) refuses them, and they keep WebDAV's dead properties in
   * step (a deleted or moved item's go with it).
   */
  get withLocks(): LockBoundWrites {
    return new LockBoundWrites(this, this.layer);
  }

  // Reads, for every front end that answers with a file's bytes, a listing, a thumbnail or a zip.
  /** The file's bytes (`range` of them), its entry with the SHA-256 when known. */
  async read(key: StorageKey, range?: ByteRange) {
    await this.may(key, 'GET');
    return this.layer.files.read(key, range);
  }
  /** "Read a file or learn it is a folder": the file opened whole, or undefined for a folder. */
  async readIfFile(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.readIfFile(key);
  }
  async withDigest<T extends Entry>(key: StorageKey, entry: T): Promise<T> {
    await this.may(key, 'GET');
    return this.layer.files.withDigest(key, entry);
  }
  async folderEtag(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.files.folderEtag(key);
  }
  /**
   * The index's ids and hashes of `paths` in `at`'s tree: asked as `at`, the key that holds them all (a
   * listed folder, the folder an upload went into, a written file itself).
   */
  async identities(at: StorageKey, paths: readonly string[]) {
    await this.may(at, 'GET');
    return this.layer.files.identities(at.user, paths);
  }
  async thumbnail(key: StorageKey, entry: Entry, size: ThumbnailSize) {
    await this.may(key, 'GET');
    return this.layer.deps.thumbnails.get(key, entry, size);
  }
  /** A folder's zip: asked for the folder, which holds every file the zip reads. */
  async zip(folder: StorageKey, opts: Parameters<ZipService['plan']>[1]) {
    await this.may(folder, 'GET');
    return this.layer.deps.zips.plan(folder, opts);
  }
  async versions(key: StorageKey) {
    await this.may(key, 'GET');
    return this.layer.deps.versions.list(key);
  }
  async readVersion(key: StorageKey, id: string) {
    await this.may(key, 'GET');
    return this.layer.deps.versions.read(key, id);
  }

  async writeFile(key: StorageKey, body: Readable, opts: Omit<WriteFileOptions, 'writer'> = {}): Promise<Entry> {
    await this.may(key, 'PUT');
    return this.layer.files.writeFile(key, body, { ...opts, writer: this.writer });
  }

  async writeParts(dir: StorageKey, parts: AsyncIterable<UploadPart>, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<Entry[]> {
    await this.may(dir, 'PUT');
    return this.layer.files.writeParts(dir, parts, { ...opts, writer: this.writer });
  }

  async delete(key: StorageKey, pre: WritePreconditions = {}): Promise<void> {
    await this.may(key, 'DELETE');
    return this.layer.files.delete(key, pre);
  }
  async createFolder(key: StorageKey) {
    await this.may(key, 'POST');
    return this.layer.files.createFolder(key);
  }

  /** Both keys: the source is taken away, the destination written (across two owners' trees through a writable grant). */
  async move(from: StorageKey, to: StorageKey, overwrite: boolean, pre: WritePreconditions = {}): Promise<void> {
    await this.may(from, 'MOVE');
    await this.may(to, 'MOVE');
    return this.layer.files.move(from, to, overwrite, this.writer, pre);
  }

  /** The source is only read; the destination is written as a Move's is. */
  async copy(from: StorageKey, to: StorageKey, overwrite: boolean): Promise<void> {
    await this.may(from, 'GET');
    await this.may(to, 'MOVE');
    return this.layer.files.copy(from, to, overwrite, this.writer);
  }

  /** The file gets a kept version's content back, written as any replace is (what it holds now is kept in turn). */
  async restoreVersion(key: StorageKey, id: string): Promise<void> {
    await this.may(key, 'PUT');
    const opened = await this.layer.deps.versions.read(key, id);
    await this.layer.files.writeFile(key, opened.stream, { sizeHint: opened.entry.size, writer: this.writer });
  }
}

/** `PrincipalOps.withLocks`: WebDAV's writes, held to its locks with no lock token, asked as any write is. */
class LockBoundWrites {
  constructor(
    private readonly ops: PrincipalOps,
    private readonly layer: Layer,
  ) {}

  /**
   * `modified`: the time the client set on the file (kept where the backend keeps times, docs/storage.md).
   * `looked`: what `lookBeforeWrite` found there just before, for a write that starts at once (an SFTP
   * OPEN): not looked at again.
   */
  async put(key: StorageKey, body: Readable, declaredSize: number | undefined, modified?: Date, looked?: WriteLook): Promise<void> {
    await this.ops.may(key, 'PUT');
    await this.layer.dav().put(key, body, { cond: NO_LOCK_TOKENS, principal: this.ops.principal, declaredSize, modified, looked });
  }
  /** A stored file takes the time the client set, where the backend keeps times (a write, as a PUT is asked). */
  async redate(key: StorageKey, modified: Date): Promise<void> {
    await this.ops.may(key, 'PUT');
    await this.layer.dav().redate(key, modified, NO_LOCK_TOKENS, this.ops.principal);
  }
  async delete(key: StorageKey): Promise<void> {
    await this.ops.may(key, 'DELETE');
    await this.layer.dav().delete(key, NO_LOCK_TOKENS, this.ops.principal);
  }
  /** One new folder whose parent exists; something at the key refuses it (already_exists). */
  async mkdir(key: StorageKey): Promise<void> {
    await this.ops.may(key, 'MKCOL');
    await this.layer
      .dav()
      .mkcol(key, NO_LOCK_TOKENS, this.ops.principal)
      .catch((e: unknown) => {
        throw e instanceof AppError && e.code === 'method_not_allowed' ? new AppError('already_exists', 'Something already exists at this path.') : e;
      });
  }
  /** A whole tree to a new name; `overwrite` false: something at the new name refuses it (already_exists). */
  async move(from: StorageKey, to: StorageKey, overwrite: boolean): Promise<void> {
    await this.ops.may(from, 'MOVE');
    await this.ops.may(to, 'MOVE');
    await this.layer
      .dav()
      .copyOrMove(from, to, { depth: 'infinity', overwrite, move: true, cond: NO_LOCK_TOKENS, principal: this.ops.principal })
      .catch((e: unknown) => {
        throw e instanceof AppError && e.code === 'precondition_failed' ? new AppError('already_exists', 'Something exists at the new name; remove it first.') : e;
      });
  }
}
