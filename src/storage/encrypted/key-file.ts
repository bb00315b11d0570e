import { readFile, writeFile } from 'node:fs/promises';
import { newMasterKeyText, parseMasterKey, type MasterKey } from '../../lib/encryption/format.js';
import type { SettingsRepo } from '../../store/types.js';

/**
 * The settings row that says a data directory's files are encrypted, and
 * with which master key (its id). A start without the key, or with another
 * one, is refused from this row alone: no file has to be read to know.
 */
export const KEY_ID_SETTING = 'encryption_key_id';

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
