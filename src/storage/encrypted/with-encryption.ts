import type { Logger } from 'pino';
import type { StorageBackend } from '../backend.js';
import type { SettingsRepo } from '../../store/settings.js';
import { encryptedBackend } from './encrypted-backend.js';
import { KEYRING_SETTING, checkKey, openKeyring, readKeyFile } from './key-file.js';

/**
 * The backend a data directory serves through: with --encryption-key-file,
 * the encryption layer over it; without, itself. Either way the key given
 * must be the one the directory's record names (a KeyError otherwise, before
 * any file is touched).
 */
export async function withEncryption(keyFile: string, settings: SettingsRepo, backend: StorageBackend, logger?: Logger): Promise<StorageBackend> {
  const master = keyFile ? await readKeyFile(keyFile) : undefined;
  await checkKey(settings, master);
  if (master === undefined) return backend;
  return encryptedBackend(backend, {
    current: master,
    all: [master, ...openKeyring([master], await settings.get(KEYRING_SETTING))],
    onBadFile: (file, e) => {
      if (logger) logger.error({ file, reason: e.reason, err: e.message }, 'a stored file failed to decrypt: it is not served');
      else process.stderr.write(`file-cloud: the stored file ${file} failed to decrypt (${e.message}); it is not served\n`);
    },
  });
}
