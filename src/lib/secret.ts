import { randomBytes } from 'node:crypto';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';

/**
 * Loads `data/secret`, the key that signs path tokens, creating it with mode
 * 0600 on first run. The key is written whole to a private temp file and then
 * hard-linked into place: `link` fails if the name exists, so when several
 * processes start at once exactly one key wins, and no process can read a
 * file that is still being written.
 */
export async function loadOrCreateSecret(file: string): Promise<Buffer> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(temp, 'wx', 0o600);
  try {
    try {
      await fh.writeFile(randomBytes(32).toString('base64') + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(temp, file).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  const text = (await readFile(file, 'utf8')).trim();
  const key = Buffer.from(text, 'base64');
  if (key.length < 32) {
    const size = (await stat(file)).size;
    throw new Error(`the secret file ${file} is damaged (${size} bytes); remove it to create a new one (this invalidates existing path tokens)`);
  }
  return key;
}
