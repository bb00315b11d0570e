import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parseDecodedStoragePath, type StorageKey } from '../../domain/storage-path.js';
import { join } from 'node:path';
import { usageDeltas } from '../usage-deltas.js';
import { openSqliteStore } from '../../store/sqlite.js';
import { isStorageError, listAll, type StorageBackend, type StorageErrorCode } from '../backend.js';
import type { Leasing } from '../coordination.js';

/** What a backend's test file hands the suite for each test. */
export type BackendUnderTest = {
  readonly backend: StorageBackend;
  cleanup(): Promise<void>;
  /** Names left in the staging area, for backends that have one; lets the suite prove aborts leave nothing. */
  staging?(): Promise<string[]>;
  /**
   * Takes the storage away under the live backend (as a lost mount or an
   * operator's `rm` would), so the suite can prove that ping really asks the
   * storage. S3 cannot lose its bucket inside the suite (the bucket is shared
   * by the file's tests); it proves the same in "s3: an unreachable object
   * store is `unavailable`".
   */
  removeStorage?(): Promise<void>;
  /** What the resumable (tus) staging holds, for backends that can tell; lets the suite prove removal. */
  resumableStaging?(): Promise<string[]>;
};

/** Leases kept in a SQLite file of their own in `dir`, as a backend under test needs them; close when done. */
export async function leasingIn(dir: string): Promise<Leasing & { close(): Promise<void> }> {
  const store = await openSqliteStore(join(dir, 'leases.db'));
  return { leases: store.leases, close: () => store.close() };
}

/** A key from a plain path below the user (`a/b.txt`, `` for the root); only the parser makes keys. */
export const keyOf = (path: string, user = 'alice'): StorageKey => parseDecodedStoragePath(`${user}/${path}`).key;

export const bodyOf = (data: string | Buffer): Readable => Readable.from([Buffer.from(data)]);

/** A body that yields `chunks` pieces, one per macrotask, so concurrent writers really interleave. */
export function slowBody(data: Buffer, chunks = 16): Readable {
  const size = Math.ceil(data.length / chunks);
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += size) {
        await new Promise((r) => setTimeout(r, 1));
        yield data.subarray(i, i + size);
      }
    })(),
  );
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c as Buffer));
  return Buffer.concat(parts);
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export async function rejectsCode(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isStorageError(e), `expected StorageError "${code}", got ${String(e)}`);
    assert.equal(e.code, code);
    return true;
  });
}

/** One backend under test, initialised, with a user root for `alice`. */
export type Ctx = BackendUnderTest & { b: StorageBackend };
/** Registers one conformance test. `root: false` skips creating alice's root first. */
export type It = (title: string, fn: (c: Ctx) => Promise<void>, opts?: { root?: boolean }) => void;

export const put = (b: StorageBackend, path: string, data: string | Buffer, ifExists: 'fail' | 'replace' | 'rename' = 'fail') =>
  b.write(keyOf(path), bodyOf(data), { ifExists });
export const text = async (b: StorageBackend, path: string) => (await readAll((await b.read(keyOf(path))).stream)).toString();
export const names = async (b: StorageBackend, path: string) => (await listAll(b, keyOf(path))).map((e) => e.name).sort();
export const stagingIsEmpty = async (c: Ctx) => {
  if (c.staging) assert.deepEqual(await c.staging(), [], 'staging area must be empty');
};

/**
 * Usage as the usage service keeps it from this backend's events (the sum
 * of their deltas), beside the bytes a recount's walk finds stored: the two
 * must agree whatever raced.
 */
export function usageLedger(b: StorageBackend): { readonly total: number; stored(): Promise<number> } {
  let total = 0;
  b.events.subscribe((e) => {
    for (const d of usageDeltas(e)) total += d.delta;
  });
  return {
    get total() {
      return total;
    },
    async stored() {
      let bytes = 0;
      for await (const w of b.walk(keyOf(''))) if (w.entry.isFile) bytes += w.entry.size;
      return bytes;
    },
  };
}

/** p, with a StorageError of one of these codes taken as a fair outcome of a race. */
export const losing = (p: Promise<unknown>, ...codes: StorageErrorCode[]): Promise<unknown> =>
  p.catch((e: unknown) => (codes.some((c) => isStorageError(e, c)) ? undefined : Promise.reject(e)));

/** Runs rounds of a race for two seconds, at least three: a local disk's window between look and act is microseconds wide. */
export async function raceRounds(round: (n: number) => Promise<unknown>): Promise<void> {
  const until = Date.now() + 2000;
  for (let n = 0; n < 3 || Date.now() < until; n++) await round(n);
}

/**
 * After a write of 3 bytes to a free name and a replace of it with 5: the events say created, then
 * replaced (what it removed: 3), each carrying the file as written; the last one is what a stat sees now.
 */
export async function assertCreatedThenReplaced(b: StorageBackend, events: readonly unknown[], path: string): Promise<void> {
  const key = keyOf(path);
  assert.deepEqual(
    // The entry and whether the writer looked at the parents are a listener's shortcuts, not what happened.
    events.map((e) => ({ ...(e as object), entry: undefined, parentsLooked: undefined })),
    [
      { type: 'created', key, isFile: true, size: 3, entry: undefined, parentsLooked: undefined },
      { type: 'replaced', key, size: 5, previousSize: 3, entry: undefined, parentsLooked: undefined },
    ],
  );
  const entries = events.map((e) => (e as { entry?: { size: number } }).entry);
  assert.equal(entries[0]?.size, 3);
  assert.deepEqual(entries[1], await b.stat(key));
}
