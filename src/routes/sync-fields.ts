import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { parseSha256Digest } from '../http/digest.js';
import type { WritePreconditions } from '../lib/conditional.js';
import type { PrincipalOperations } from '../services/operations.js';
import type { Entry } from '../storage/backend.js';
import { writtenIdentity } from '../lib/written-identities.js';

/** One written file in a PUT answer (docs/api.md "Sync fields"). */
export type WrittenFile = { name: string; path: string; size: number; etag: string; id: string | null; sha256: string | null };

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

/** If-Match / If-None-Match of a write (PUT, DELETE, Move): the item the URL names must match them (412). */
export function writePreconditions(request: FastifyRequest): WritePreconditions {
  return { ifMatch: one(request.headers['if-match']), ifNoneMatch: one(request.headers['if-none-match']) };
}

/**
 * The SHA-256 (hex) a raw PUT says its body has, from `Repr-Digest` or `Content-Digest` (equal for
 * an upload without content coding, which is all a PUT here is): checked before the file takes
 * its name (400 `digest_mismatch`). Both given and naming different hashes, or a malformed one: 400.
 */
export function sentDigest(headers: FastifyRequest['headers']): string | undefined {
  const repr = parseSha256Digest(one(headers['repr-digest']));
  const content = parseSha256Digest(one(headers['content-digest']));
  if (repr === 'malformed' || content === 'malformed') throw new AppError('bad_request', 'Repr-Digest / Content-Digest must be a dictionary like sha-256=:<base64 of 32 bytes>: (RFC 9530).');
  if (repr !== undefined && content !== undefined && repr !== content) throw new AppError('digest_mismatch', 'Repr-Digest and Content-Digest name different SHA-256 hashes; nothing was written.');
  return repr ?? content;
}

/**
 * The PUT answer's `files`: each written file with its ETag, stable id and SHA-256 (null when
 * unknown). What the index wrote for it while the request was served (collectingWritten, around
 * the write) answers; what was not noted is read through the layer as `at`, the key the request named.
 */
export async function writtenFiles(ops: Pick<PrincipalOperations, 'identities'>, at: StorageKey, written: readonly { key: StorageKey; entry: Entry }[]): Promise<WrittenFile[]> {
  const noted = new Map(written.map(({ key }) => [key.segments.join('/'), writtenIdentity(key.user, key.segments.join('/'))] as const));
  const unnoted = [...noted].filter(([, identity]) => identity === undefined).map(([path]) => path);
  const known: ReadonlyMap<string, { id: string | null; sha256: string | null; etag: string | null }> = unnoted.length === 0 ? new Map() : await ops.identities(at, unnoted);
  return written.map(({ key, entry }) => {
    const path = key.segments.join('/');
    const row = noted.get(path) ?? known.get(path);
    // The index's hash only for these very bytes (another write may have come since).
    const sha256 = entry.sha256 ?? (row?.etag === entry.etag ? row?.sha256 : null) ?? null;
    return { name: entry.name, path: `/${key.user}/${path}`, size: entry.size, etag: entry.etag, id: row?.id ?? null, sha256 };
  });
}

/** A PUT's 201 body (docs/api.md "Sync fields"): the final names, and each written file's sync fields. */
export async function writtenAnswer(ops: Pick<PrincipalOperations, 'identities'>, at: StorageKey, written: readonly { key: StorageKey; entry: Entry }[]): Promise<{ files_written: string[]; files: WrittenFile[] }> {
  return { files_written: written.map((w) => w.entry.name), files: await writtenFiles(ops, at, written) };
}
