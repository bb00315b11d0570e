import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { newMasterKeyText, parseMasterKey, type MasterKey } from '../../lib/encryption/format.js';
import type { SettingsRepo } from '../../store/settings.js';

/**
 * The settings row that says a data directory's files are encrypted, and
 * with which master key (its id). A start without the key, or with another
 * one, is refused from this row alone: no file has to be read to know.
 */
export const KEY_ID_SETTING = 'encryption_key_id';

/**
 * The master keys a rotate replaced, sealed by the key that replaced them:
 * versions and trash items keep the data key wrap they had, and the
 * current key opens them through this ring.
 */
export const KEYRING_SETTING = 'encryption_keyring';

/** A refusal to start or to run a command over the key: one line for the operator. */
export class KeyError extends Error {
  override name = 'KeyError';
}

/** The master key in a key file; KeyError when the file cannot be read or holds no key. */
export async function readKeyFile(path: string): Promise<MasterKey> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new KeyError(`cannot read the encryption key file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  try {
    return parseMasterKey(text);
  } catch (e) {
    throw new KeyError(`the encryption key file ${path} holds no key: ${(e as Error).message}`);
  }
}

/** Writes a new key file readable by its owner alone; an existing file is never overwritten. */
export async function writeNewKeyFile(path: string): Promise<MasterKey> {
  const text = newMasterKeyText();
  try {
    await writeFile(path, text, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KeyError(code === 'EEXIST' ? `${path} exists already; a key file is never overwritten (losing a key loses the files it encrypted)` : `cannot write ${path}: ${code ?? String(e)}`);
  }
  return parseMasterKey(text);
}

/**
 * Checks the key given against the data directory's record, and records it
 * when the directory had none: with a key, the record must be absent or
 * name it; without one, the record must be absent.
 */
export async function checkKey(settings: SettingsRepo, master: MasterKey | undefined): Promise<void> {
  const given = master?.id.toString('hex');
  const recorded = given === undefined ? await settings.get(KEY_ID_SETTING) : await settings.getOrCreate(KEY_ID_SETTING, () => given);
  if (recorded === undefined || recorded === given) return;
  throw new KeyError(
    given === undefined
      ? `the files of this data directory are encrypted (key id ${recorded}): start with --encryption-key-file`
      : `the encryption key given (id ${given}) is not the one this data directory's files are encrypted with (id ${recorded})`,
  );
}

const RING_AAD = Buffer.from('file-cloud keyring\0');

/** The ring of earlier keys as a settings value: the sealing key's id, then AES-256-GCM of the keys. */
export function sealKeyring(by: MasterKey, keys: readonly MasterKey[]): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', by.key, iv);
  c.setAAD(Buffer.concat([RING_AAD, by.id]));
  const sealed = Buffer.concat([iv, c.update(Buffer.concat(keys.map((k) => k.key))), c.final(), c.getAuthTag()]);
  return `${by.id.toString('hex')}:${sealed.toString('base64')}`;
}

/** The earlier keys of a ring sealed by one of `by` (none when there is no ring, or it is sealed by another key). */
export function openKeyring(by: readonly MasterKey[], value: string | undefined): MasterKey[] {
  if (!value) return [];
  const [id, data] = value.split(':');
  const sealer = by.find((k) => k.id.toString('hex') === id);
  if (!sealer || data === undefined) return [];
  const sealed = Buffer.from(data, 'base64');
  const d = createDecipheriv('aes-256-gcm', sealer.key, sealed.subarray(0, 12));
  d.setAAD(Buffer.concat([RING_AAD, sealer.id]));
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  let plain: Buffer;
  try {
    plain = Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    throw new KeyError('the ring of earlier encryption keys in the database fails authentication');
  }
  const keys: MasterKey[] = [];
  for (let at = 0; at + 32 <= plain.length; at += 32) keys.push(parseMasterKey(plain.subarray(at, at + 32).toString('base64')));
  return keys;
}
