import { keyId, parseDecodedStoragePath } from '../domain/storage-path.js';
import type { Config } from '../config/options.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { UsageError } from '../config/load.js';
import { openDataDir } from '../main.js';
import { KEYRING_SETTING, KEY_ID_SETTING, openKeyring, readKeyFile, sealKeyring, writeNewKeyFile } from '../storage/encrypted/key-file.js';
import { rewrapTrash, rewrapTree, rewrapVersions } from '../storage/encrypted/rotate.js';
import type { ExtraOption } from './args.js';
import { migrateTrash, migrateTree, migrateVersions } from '../storage/encrypted/migrate.js';
import { hold } from '../storage/coordination.js';
import { trashItemLease } from '../services/trash.js';

export const ENCRYPTION_COMMANDS = {
  keygen: { usage: 'encryption keygen PATH', summary: 'Write a new encryption key (32 random bytes, base64) to PATH, readable by its owner alone; an existing file is never overwritten.', arity: 1 },
  migrate: {
    usage: 'encryption migrate',
    summary: 'Encrypt every file written before --encryption-key-file was given. Safe beside a running server; run it again after an interruption and it continues.',
    arity: 0,
  },
  rotate: {
    usage: 'encryption rotate --new-key-file PATH',
    summary: 'Re-wrap every file\'s data key under the key in PATH (the contents stay as they are stored); the key given with --encryption-key-file is refused from then on. Run it with the server stopped, then start the server with the new key.',
    arity: 0,
  },
} as const;

export const NEW_KEY_OPTION: ExtraOption = { flag: '--new-key-file', type: 'string', value: 'PATH', description: 'The key to rotate to (file-cloud encryption keygen PATH).' };

const say = (line: string) => void process.stderr.write(`${line}\n`);

/** `file-cloud encryption keygen|migrate|rotate`. */
export async function runEncryptionCommand(sub: keyof typeof ENCRYPTION_COMMANDS, rest: readonly string[], config: () => Config, newKeyFile?: string): Promise<number> {
  if (sub === 'keygen') {
    await writeNewKeyFile(rest[0]!);
    say(`Wrote a new encryption key to ${rest[0]}. Keep a copy apart from the data: without it the files it encrypts are lost.`);
    return 0;
  }
  const cfg = config();
  if (!cfg.encryptionKeyFile) throw new UsageError('encryption migrate needs --encryption-key-file');
  if (sub === 'rotate') {
    if (!newKeyFile) throw new UsageError('encryption rotate needs --new-key-file');
    return rotate(cfg, newKeyFile);
  }
  const { store, backend, stored } = await openDataDir(cfg, false);
  try {
    let total = 0;
    for (const { username } of await store.users.list()) {
      const root = parseDecodedStoragePath(`${username}/`).key;
      if (await stored.stat(root)) {
        const c = await migrateTree(stored, backend, root, (key) => say(`encrypted ${keyId(key)}`));
        total += c.encrypted;
        say(`${username}: ${c.encrypted} encrypted, ${c.already} already encrypted${c.changed ? `, ${c.changed} changed meanwhile (run again)` : ''}`);
      }
      const v = await migrateVersions(stored, backend, await allVersions(store, username), (ref) => say(`encrypted version ${ref.owner}/${ref.id}`));
      total += v.encrypted;
      if (v.encrypted + v.already + v.changed > 0) say(`${username}: ${v.encrypted} versions encrypted, ${v.already} already encrypted${v.changed ? `, ${v.changed} gone meanwhile` : ''}`);
      const t = await migrateTrash(stored, backend, await store.trash.list(username), holdTrashItem(store), (f) => say(`encrypted trash ${f.owner}/${f.id}/${f.path}`));
      total += t.encrypted;
      if (t.encrypted + t.already + t.changed > 0) say(`${username}: ${t.encrypted} trash files encrypted, ${t.already} already encrypted${t.changed ? `, ${t.changed} gone meanwhile` : ''}`);
    }
    say(`Encrypted ${total} file${total === 1 ? '' : 's'}.`);
  } finally {
    await backend.close();
    await store.close();
  }
  return 0;
}


/** A trash item held as a restore or purge holds it, so neither runs while its files are rewritten. */
const holdTrashItem = (store: MetadataStore) => (id: string) => hold({ leases: store.leases }, trashItemLease(id));

/** Every version the store records of the user's files (ids only: small beside the bytes). */
const allVersions = (store: MetadataStore, owner: string) => store.versions.oldest(owner, Number.MAX_SAFE_INTEGER);

/**
 * Every file's data key re-wrapped under the new key, then the key record
 * moved to it: the ring (earlier keys sealed by the new one, for tus
 * stagings open across it, which keep their wrap) first, the key id last. Killed
 * before the end, the record still names the old key; running it again
 * finishes.
 */
async function rotate(cfg: Config, newKeyFile: string): Promise<number> {
  const old = await readKeyFile(cfg.encryptionKeyFile);
  const next = await readKeyFile(newKeyFile);
  const { store, backend, stored } = await openDataDir(cfg, false);
  try {
    const ring = openKeyring([old, next], await store.settings.get(KEYRING_SETTING)).filter((k) => !k.id.equals(next.id) && !k.id.equals(old.id));
    const from = [old, ...ring];
    for (const { username } of await store.users.list()) {
      const root = parseDecodedStoragePath(`${username}/`).key;
      if (await stored.stat(root)) {
        const c = await rewrapTree(stored, root, from, next, (key) => say(`re-wrapped ${keyId(key)}`));
        say(`${username}: ${c.rewrapped} re-wrapped, ${c.already} already under the new key${c.plain ? `, ${c.plain} plain (encrypt them with migrate)` : ''}${c.changed ? `, ${c.changed} changed meanwhile (run again)` : ''}`);
      }
      const v = await rewrapVersions(stored, await allVersions(store, username), from, next, (ref) => say(`re-wrapped version ${ref.owner}/${ref.id}`));
      if (v.rewrapped + v.already + v.plain > 0) say(`${username}: ${v.rewrapped} versions re-wrapped, ${v.already} already under the new key${v.plain ? `, ${v.plain} plain` : ''}`);
      const t = await rewrapTrash(stored, await store.trash.list(username), holdTrashItem(store), from, next, (f) => say(`re-wrapped trash ${f.owner}/${f.id}/${f.path}`));
      if (t.rewrapped + t.already + t.plain > 0) say(`${username}: ${t.rewrapped} trash files re-wrapped, ${t.already} already under the new key${t.plain ? `, ${t.plain} plain` : ''}`);
    }
    await store.settings.put(KEYRING_SETTING, sealKeyring(next, from));
    await store.settings.put(KEY_ID_SETTING, next.id.toString('hex'));
    say(`The data directory's key is now ${newKeyFile} (id ${next.id.toString('hex')}); start the server with it. Keep the old key until uploads open across the rotate have finished, or simply keep it safe.`);
  } finally {
    await backend.close();
    await store.close();
  }
  return 0;
}
