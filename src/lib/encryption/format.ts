import { createCipheriv, createDecipheriv, createSecretKey, hash, randomBytes, type KeyObject } from 'node:crypto';
import { openPart } from './gcm-part.js';
import type { NativeGcm } from './native-gcm.js';

/**
 * The stored form of an encrypted file (CONTRACT "Encryption at rest"):
 *
 *   header ‖ chunk 0 ‖ chunk 1 ‖ … ‖ chunk n-1
 *
 * header (HEADER_SIZE bytes, fixed so sizes are pure arithmetic):
 *   magic "FCEN" ‖ version ‖ key id (8) ‖ file id (16) ‖ nonce prefix (7)
 *   ‖ wrap iv (12) ‖ wrapped data key (32) ‖ wrap tag (16)
 *
 * Every chunk is AES-256-GCM under the file's data key of CHUNK_SIZE
 * plaintext bytes (the last one shorter, empty only for an empty file).
 *
 * Version 2 (written now): chunk i = nonce (12, random, drawn afresh each
 * time a chunk is sealed) ‖ ciphertext ‖ tag, with file id ‖ i (32-bit
 * big-endian) ‖ last (1 byte: 1 on the last chunk) as associated data. A
 * resumed upload seals a chunk again when a crash lost the record of it, and
 * a client may send other bytes there: a nonce of its own per sealing means
 * one (key, nonce) pair never seals two plaintexts. The header's nonce prefix
 * is unused.
 *
 * Version 1 (still read, and written only into tus stagings begun under it):
 * chunk i = ciphertext ‖ tag, nonce = prefix ‖ i (32-bit big-endian) ‖ last,
 * the file id as associated data.
 *
 * Either way a chunk moved to another index, another file or to the end
 * fails its tag (index and last flag are authenticated, and every file has a
 * data key of its own), and chunks have a fixed stored size, so a range is
 * one read. The data key is wrapped by the master key with the header's
 * version, key id and file id as associated data, so a header is bound to its
 * file id and rotation rewrites the header alone.
 */
export const MAGIC = Buffer.from('FCEN', 'latin1');
/** The version new files are written in. */
export const VERSION = 2;
/** Every version this code reads. */
const VERSIONS: readonly number[] = [1, 2];
export const CHUNK_SIZE = 64 * 1024;
export const TAG_SIZE = 16;
export const NONCE_SIZE = 12;
const KEY_ID = 8;
const FILE_ID = 16;
const PREFIX = 7;
const IV = NONCE_SIZE;
/** What a stored chunk adds to its plaintext in a version: the tag, and from version 2 its nonce. */
export const chunkOverhead = (version: number): number => (version === 1 ? TAG_SIZE : NONCE_SIZE + TAG_SIZE);
/** A full chunk's stored size in a version. */
export const storedChunk = (version: number): number => CHUNK_SIZE + chunkOverhead(version);
/** A full chunk's stored size in the version written now. */
export const STORED_CHUNK = storedChunk(VERSION);
const KEY = 32;
const AT_KEY_ID = MAGIC.length + 1;
const AT_FILE_ID = AT_KEY_ID + KEY_ID;
const AT_PREFIX = AT_FILE_ID + FILE_ID;
const AT_IV = AT_PREFIX + PREFIX;
const AT_WRAPPED = AT_IV + IV;
const AT_TAG = AT_WRAPPED + KEY;
export const HEADER_SIZE = AT_TAG + TAG_SIZE;

/**
 * A key's bytes as a KeyObject, made once per master or file key: given a
 * Buffer, createCipheriv builds a KeyObject of its own for every call, which
 * costs more than sealing a small chunk.
 */
const keyObjects = new WeakMap<MasterKey | FileKey, KeyObject>();
function secretOf(owner: MasterKey | FileKey, bytes: Buffer): KeyObject {
  let k = keyObjects.get(owner);
  if (k === undefined) {
    k = createSecretKey(bytes);
    keyObjects.set(owner, k);
  }
  return k;
}
const cipherKey = (key: FileKey): KeyObject => secretOf(key, key.dataKey);

/** A master key and the id stored in each header it wrapped (not secret: it tells keys apart). */
export type MasterKey = { readonly id: Buffer; readonly key: Buffer };

/** What a header holds once its data key is unwrapped. */
export type FileKey = { readonly version: number; readonly fileId: Buffer; readonly prefix: Buffer; readonly dataKey: Buffer };

/** Why a stored file cannot be decrypted: the read fails with it and the log says which. */
export class DecryptError extends Error {
  constructor(
    readonly reason: 'other_key' | 'bad_header' | 'bad_chunk' | 'bad_size',
    message: string,
  ) {
    super(message);
    this.name = 'DecryptError';
  }
}

/** The master key of a key file's contents: 32 bytes in base64 (whitespace around it allowed). */
export function parseMasterKey(text: string): MasterKey {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || key.length !== KEY) throw new Error(`an encryption key is ${KEY} bytes in base64 (${Math.ceil(KEY / 3) * 4} characters)`);
  return { key, id: hash('sha256', Buffer.concat([Buffer.from('file-cloud master key id\0'), key]), 'buffer').subarray(0, KEY_ID) };
}

/** The text of a new key file. */
export function newMasterKeyText(): string {
  return `${randomBytes(KEY).toString('base64')}\n`;
}

/** The format version of a file whose first bytes these are; undefined when they do not start like an encrypted file. */
export function headerVersion(bytes: Buffer): number | undefined {
  if (bytes.length < MAGIC.length + 1 || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const version = bytes[MAGIC.length]!;
  return VERSIONS.includes(version) ? version : undefined;
}

/** True when bytes (a file's first bytes) start like an encrypted file of this format. */
export function hasMagic(bytes: Buffer): boolean {
  return headerVersion(bytes) !== undefined;
}

function wrapAad(version: number, keyId: Buffer, fileId: Buffer): Buffer {
  return Buffer.concat([MAGIC, Buffer.of(version), keyId, fileId]);
}

/** A fresh file key and the header that carries it wrapped by master. */
export function newFileKey(master: MasterKey, version = VERSION): { header: Buffer; key: FileKey } {
  const key: FileKey = { version, fileId: freshRandom(FILE_ID), prefix: freshRandom(PREFIX), dataKey: freshRandom(KEY) };
  return { header: headerFor(master, key), key };
}

/** The header for key under master (a new wrap iv each time: rotation calls it too). */
export function headerFor(master: MasterKey, key: FileKey): Buffer {
  const iv = freshRandom(IV);
  const c = createCipheriv('aes-256-gcm', secretOf(master, master.key), iv);
  c.setAAD(wrapAad(key.version, master.id, key.fileId));
  const wrapped = Buffer.concat([c.update(key.dataKey), c.final()]);
  return Buffer.concat([MAGIC, Buffer.of(key.version), master.id, key.fileId, key.prefix, iv, wrapped, c.getAuthTag()]);
}

/** The key id a header names (undefined when bytes are no header). */
export function headerKeyId(header: Buffer): Buffer | undefined {
  if (header.length < HEADER_SIZE || !hasMagic(header)) return undefined;
  return header.subarray(AT_KEY_ID, AT_KEY_ID + KEY_ID);
}

/** Unwraps a header with the first master key whose id it names. */
export function openHeader(header: Buffer, masters: readonly MasterKey[]): FileKey {
  const keyId = headerKeyId(header);
  if (keyId === undefined) throw new DecryptError('bad_header', 'the file has no valid encryption header');
  const master = masters.find((m) => m.id.equals(keyId));
  if (master === undefined) throw new DecryptError('other_key', `the file is encrypted with another key (id ${keyId.toString('hex')})`);
  const version = headerVersion(header)!;
  const fileId = Buffer.from(header.subarray(AT_FILE_ID, AT_FILE_ID + FILE_ID));
  const d = createDecipheriv('aes-256-gcm', secretOf(master, master.key), header.subarray(AT_IV, AT_IV + IV));
  d.setAAD(wrapAad(version, keyId, fileId));
  d.setAuthTag(header.subarray(AT_TAG, AT_TAG + TAG_SIZE));
  try {
    const dataKey = Buffer.concat([d.update(header.subarray(AT_WRAPPED, AT_WRAPPED + KEY)), d.final()]);
    return { version, fileId, prefix: Buffer.from(header.subarray(AT_PREFIX, AT_PREFIX + PREFIX)), dataKey };
  } catch {
    throw new DecryptError('bad_header', 'the file’s encryption header fails authentication');
  }
}

function v1Nonce(key: FileKey, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(IV);
  key.prefix.copy(n, 0);
  n.writeUInt32BE(index, PREFIX);
  n[IV - 1] = last ? 1 : 0;
  return n;
}

/** Version 2's associated data of chunk `index`: the file, the index and the last flag. */
function chunkAad(key: FileKey, index: number, last: boolean): Buffer {
  const aad = Buffer.alloc(FILE_ID + 5);
  key.fileId.copy(aad, 0);
  aad.writeUInt32BE(index, FILE_ID);
  aad[FILE_ID + 4] = last ? 1 : 0;
  return aad;
}

/**
 * Fresh random bytes (nonces, file ids, data keys, wrap ivs), cut from a
 * block drawn at once: a draw costs about as much for 4 KiB as for 12 bytes,
 * and a new file needed four of them, a quarter of a small upload's
 * encryption. A block is never refilled: bytes handed out may still be in
 * use (a nonce waiting to be written, a file's key); every byte is handed
 * out once.
 */
const RANDOM_BLOCK = 4096;
let randomBlock = Buffer.alloc(0);
let randomAt = 0;
function freshRandom(n: number): Buffer {
  if (randomAt + n > randomBlock.length) {
    randomBlock = randomBytes(RANDOM_BLOCK);
    randomAt = 0;
  }
  randomAt += n;
  return randomBlock.subarray(randomAt - n, randomAt);
}
const freshNonce = (): Buffer => freshRandom(IV);

/**
 * Chunk `index` of a file, encrypted from its plaintext in parts (as they
 * arrived, never joined): (version 2: the nonce, then) the ciphertext of each
 * part, then the tag. Joining them would copy every byte once more into
 * fresh memory, which costs about as much as the encryption itself.
 */
export function sealParts(key: FileKey, index: number, last: boolean, plain: readonly Buffer[]): Buffer[] {
  const v1 = key.version === 1;
  const n = v1 ? v1Nonce(key, index, last) : freshNonce();
  const c = createCipheriv('aes-256-gcm', cipherKey(key), n);
  c.setAAD(v1 ? key.fileId : chunkAad(key, index, last));
  const out = v1 ? [] : [n];
  for (const p of plain) out.push(c.update(p));
  c.final();
  out.push(c.getAuthTag());
  return out;
}

/** The stored size of a chunk of `plain` bytes. */
export const sealedSize = (version: number, plain: number): number => plain + chunkOverhead(version);

/**
 * sealParts on native/gcm-part.c, into memory the caller gives (`out`, at
 * least sealedSize bytes; the sealing stream reuses it once the chunk is
 * stored): the same stored bytes, as one buffer, the view of `out` written.
 * node:crypto's update allocates every output, which costs about half of
 * sealing a chunk (docs/performance.md, "A native AES-GCM, prototyped").
 */
export function sealPartsInto(native: NativeGcm, key: FileKey, index: number, last: boolean, plain: readonly Buffer[], out: Buffer): Buffer {
  const v1 = key.version === 1;
  let length = 0;
  for (const p of plain) length += p.length;
  const size = sealedSize(key.version, length);
  if (out.length < size) throw new RangeError(`sealPartsInto: out holds ${out.length} bytes, the chunk needs ${size}`);
  const n = v1 ? v1Nonce(key, index, last) : freshNonce();
  const textAt = v1 ? 0 : IV;
  if (!v1) n.copy(out, 0);
  native.seal(key.dataKey, n, v1 ? key.fileId : chunkAad(key, index, last), plain, out.subarray(textAt, textAt + length), out.subarray(textAt + length, size));
  return out.subarray(0, size);
}

/** Chunk `index` of a file, encrypted: its stored bytes. */
export function sealChunk(key: FileKey, index: number, last: boolean, plain: Buffer): Buffer {
  return Buffer.concat(sealParts(key, index, last, [plain]));
}

/** The first n bytes of parts, and the parts after them (neither copied unless n spans parts). */
function splitFront(parts: readonly Buffer[], n: number): [Buffer, Buffer[]] {
  const front: Buffer[] = [];
  let left = n;
  let i = 0;
  for (; i < parts.length && left > 0; i++) {
    const p = parts[i]!;
    if (p.length > left) return [joined([...front, p.subarray(0, left)]), [p.subarray(left), ...parts.slice(i + 1)]];
    front.push(p);
    left -= p.length;
  }
  return [joined(front), parts.slice(i)];
}
const joined = (parts: readonly Buffer[]): Buffer => (parts.length === 1 ? parts[0]! : Buffer.concat(parts));

/**
 * The plaintext of stored chunk `index` given in parts (its stored bytes cut
 * anywhere), in as many parts; DecryptError when it is not exactly what was
 * sealed there. Nothing is returned before the whole chunk is authenticated.
 */
export function openParts(key: FileKey, index: number, last: boolean, stored: readonly Buffer[]): Buffer[] {
  const v1 = key.version === 1;
  let left = stored.reduce((n, p) => n + p.length, 0) - chunkOverhead(key.version);
  if (left < 0) throw new DecryptError('bad_chunk', `chunk ${index} is cut short`);
  let body = stored;
  let n: Buffer;
  if (v1) n = v1Nonce(key, index, last);
  else [n, body] = splitFront(stored, IV);
  const d = createDecipheriv('aes-256-gcm', cipherKey(key), n);
  d.setAAD(v1 ? key.fileId : chunkAad(key, index, last));
  const plain: Buffer[] = [];
  const tag: Buffer[] = [];
  for (const p of body) {
    const text = left >= p.length ? p : p.subarray(0, left);
    if (text.length > 0) plain.push(d.update(text));
    if (text.length < p.length) tag.push(p.subarray(text.length));
    left -= text.length;
  }
  d.setAuthTag(joined(tag));
  try {
    d.final();
  } catch {
    throw new DecryptError('bad_chunk', `chunk ${index} fails authentication`);
  }
  return plain;
}

/**
 * Plaintext bytes from..to-1 of stored chunk `index` (its stored bytes in one
 * buffer), the whole chunk authenticated first; DecryptError when it is not
 * exactly what was sealed there. Only the wanted bytes are decrypted, into
 * memory of their own (src/lib/encryption/gcm-part.ts): for a small range,
 * where openParts would write out the whole chunk's plaintext.
 */
export function openChunkPart(key: FileKey, index: number, last: boolean, stored: Buffer, from: number, to: number): Buffer {
  const v1 = key.version === 1;
  const textEnd = stored.length - TAG_SIZE;
  const textStart = v1 ? 0 : IV;
  if (textEnd < textStart) throw new DecryptError('bad_chunk', `chunk ${index} is cut short`);
  const nonce = v1 ? v1Nonce(key, index, last) : stored.subarray(0, IV);
  const text = stored.subarray(textStart, textEnd);
  try {
    return openPart(cipherKey(key), nonce, v1 ? key.fileId : chunkAad(key, index, last), text, stored.subarray(textEnd), Math.min(from, text.length), Math.min(to, text.length));
  } catch {
    throw new DecryptError('bad_chunk', `chunk ${index} fails authentication`);
  }
}

/** The plaintext of stored chunk `index`; DecryptError when it is not exactly what was sealed there. */
export function openChunk(key: FileKey, index: number, last: boolean, stored: Buffer): Buffer {
  const plain = openParts(key, index, last, [stored]);
  return plain.length === 1 ? plain[0]! : Buffer.concat(plain);
}

function tailAad(key: FileKey, offset: number): Buffer {
  const at = Buffer.alloc(8);
  at.writeBigUInt64BE(BigInt(offset));
  return Buffer.concat([TAIL_LABEL, key.fileId, at]);
}
const TAIL_LABEL = Buffer.from('FCEN partial chunk\0', 'latin1');

/**
 * The partial last chunk of an upload that stopped at `offset`, sealed for
 * its staging: iv ‖ ciphertext ‖ tag. Its iv is random, never a chunk's
 * nonce: the same chunk is sealed again, longer, each time the upload moves
 * on, and a GCM nonce must never seal two plaintexts. The offset is bound
 * in, so a record kept for another offset does not open.
 */
export function sealTail(key: FileKey, offset: number, plain: Buffer): Buffer {
  const iv = freshRandom(IV);
  const c = createCipheriv('aes-256-gcm', cipherKey(key), iv);
  c.setAAD(tailAad(key, offset));
  return Buffer.concat([iv, c.update(plain), c.final(), c.getAuthTag()]);
}

/** The plaintext of a record sealTail made for `offset`; DecryptError otherwise. */
export function openTail(key: FileKey, offset: number, record: Buffer): Buffer {
  if (record.length < IV + TAG_SIZE) throw new DecryptError('bad_chunk', 'the staged partial chunk is cut short');
  const d = createDecipheriv('aes-256-gcm', cipherKey(key), record.subarray(0, IV));
  d.setAAD(tailAad(key, offset));
  d.setAuthTag(record.subarray(record.length - TAG_SIZE));
  const plain = d.update(record.subarray(IV, record.length - TAG_SIZE));
  try {
    d.final();
  } catch {
    throw new DecryptError('bad_chunk', 'the staged partial chunk fails authentication');
  }
  return plain;
}

/** Chunks of a file of `plainSize` bytes: at least one (an empty file is one empty, final chunk). */
export function chunkCount(plainSize: number): number {
  return Math.max(1, Math.ceil(plainSize / CHUNK_SIZE));
}

/** The stored size of a file of `plainSize` bytes in a format version. */
export function storedSize(plainSize: number, version = VERSION): number {
  return HEADER_SIZE + plainSize + chunkCount(plainSize) * chunkOverhead(version);
}

/**
 * The plaintext size of a stored file of `stored` bytes in a format version,
 * or undefined when no file of that version has that size (it cannot be one:
 * plain, or cut).
 */
export function plainSize(stored: number, version = VERSION): number | undefined {
  const extra = chunkOverhead(version);
  const body = stored - HEADER_SIZE;
  if (!Number.isSafeInteger(body) || body < extra) return undefined;
  const full = Math.floor(body / (CHUNK_SIZE + extra));
  const rest = body % (CHUNK_SIZE + extra);
  if (rest === 0) return full * CHUNK_SIZE;
  // Only an empty file ends in an empty chunk; a partial tag is no chunk.
  if (rest < extra || (rest === extra && full > 0)) return undefined;
  return full * CHUNK_SIZE + rest - extra;
}

/** True when some version's file has this stored size: only then can its header make it encrypted. */
export const couldBeEncrypted = (stored: number): boolean => VERSIONS.some((v) => plainSize(stored, v) !== undefined);

/** The plaintext size of a stored file whose first bytes are head; undefined when it is no encrypted file. */
export function plainSizeOf(stored: number, head: Buffer): number | undefined {
  const version = headerVersion(head);
  return version === undefined ? undefined : plainSize(stored, version);
}

/**
 * What to read for the plaintext bytes start..end (inclusive, within a file
 * of `size` plaintext bytes): the chunks first..last, the stored byte range
 * that holds them, and where the wanted bytes begin in the first chunk's plaintext.
 */
export type ChunkSpan = { readonly first: number; readonly last: number; readonly stored: { readonly start: number; readonly end: number }; readonly skip: number; readonly length: number };

export function chunkSpan(size: number, start: number, end: number, version = VERSION): ChunkSpan {
  const first = Math.floor(start / CHUNK_SIZE);
  const last = Math.min(Math.floor(end / CHUNK_SIZE), chunkCount(size) - 1);
  const chunk = storedChunk(version);
  return {
    first,
    last,
    stored: { start: HEADER_SIZE + first * chunk, end: Math.min(HEADER_SIZE + (last + 1) * chunk, storedSize(size, version)) - 1 },
    skip: start - first * CHUNK_SIZE,
    length: end - start + 1,
  };
}
