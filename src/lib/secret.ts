import { randomBytes } from 'node:crypto';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';

/**
 * The text of `file`, which is made from `make()` with mode 0600 when it does not exist. The text
 * is written whole to a private temp file and then hard-linked into place: `link` fails if the name
 * exists, so when several processes start at once exactly one text wins, and no process can read
 * a file that is still being written.
 */
export async function readOrCreateFile(file: string, make: () => string): Promise<string> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(temp, 'wx', 0o600);
  try {
    try {
      await fh.writeFile(make());
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
  return readFile(file, 'utf8');
}

/** Loads `data/secret`, the key that signs path tokens, creating it on first run (readOrCreateFile). */
export async function loadOrCreateSecret(file: string): Promise<Buffer> {
  const text = (await readOrCreateFile(file, () => randomBytes(32).toString('base64') + '\n')).trim();
  const key = Buffer.from(text, 'base64');
  if (key.length < 32) {
    const size = (await stat(file)).size;
    throw new Error(`the secret file ${file} is damaged (${size} bytes); remove it to create a new one (this invalidates existing path tokens)`);
  }
  return key;
}
