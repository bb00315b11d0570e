import { keyId, parseDecodedStoragePath } from '../domain/storage-path.js';
import type { Config } from '../config/options.js';
import { UsageError } from '../config/load.js';
import { openDataDir } from '../main.js';
import { writeNewKeyFile } from '../storage/encrypted/key-file.js';
import { migrateTree } from '../storage/encrypted/migrate.js';

export const ENCRYPTION_COMMANDS = {
  keygen: { usage: 'encryption keygen PATH', summary: 'Write a new encryption key (32 random bytes, base64) to PATH, readable by its owner alone; an existing file is never overwritten.', arity: 1 },
  migrate: {
    usage: 'encryption migrate',
    summary: 'Encrypt every file written before --encryption-key-file was given. Safe beside a running server; run it again after an interruption and it continues.',
    arity: 0,
  },
} as const;

const say = (line: string) => void process.stderr.write(`${line}\n`);

/** `file-cloud encryption keygen|migrate`. */
export async function runEncryptionCommand(sub: keyof typeof ENCRYPTION_COMMANDS, rest: readonly string[], config: () => Config): Promise<number> {
  if (sub === 'keygen') {
    await writeNewKeyFile(rest[0]!);
    say(`Wrote a new encryption key to ${rest[0]}. Keep a copy apart from the data: without it the files it encrypts are lost.`);
    return 0;
  }
  const cfg = config();
  if (!cfg.encryptionKeyFile) throw new UsageError('encryption migrate needs --encryption-key-file');
  const { store, backend, stored } = await openDataDir(cfg, false);
  try {
    let total = 0;
    for (const { username } of await store.users.list()) {
      const root = parseDecodedStoragePath(`${username}/`).key;
      if (!(await stored.stat(root))) continue;
      const c = await migrateTree(stored, backend, root, (key) => say(`encrypted ${keyId(key)}`));
      total += c.encrypted;
      say(`${username}: ${c.encrypted} encrypted, ${c.already} already encrypted${c.changed ? `, ${c.changed} changed meanwhile (run again)` : ''}`);
    }
    say(`Encrypted ${total} file${total === 1 ? '' : 's'}.`);
  } finally {
    await backend.close();
    await store.close();
  }
  return 0;
}

