import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';

/**
 * Loads `data/secret`, the key that signs path tokens, creating it with mode
 * 0600 on first run. `wx` makes creation race-free if two processes start at
 * once: the loser reads the winner's key.
 */
export async function loadOrCreateSecret(file: string): Promise<Buffer> {
  try {
    const fh = await open(file, 'wx', 0o600);
    try {
      await fh.writeFile(randomBytes(32).toString('base64') + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const text = (await readFile(file, 'utf8')).trim();
  const key = Buffer.from(text, 'base64');
  if (key.length < 32) {
    const size = (await stat(file)).size;
    throw new Error(`the secret file ${file} is damaged (${size} bytes); remove it to create a new one (this invalidates existing path tokens)`);
  }
  return key;
}
