import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import ssh2 from 'ssh2';
import type { MetadataStore } from '../store/metadata-store.js';
import { sshFingerprint } from '../domain/ssh-public-key.js';
import { readOrCreateFile } from '../lib/secret.js';

/** The settings row that holds the host key with PostgreSQL (every node shows the same key). */
const SETTING = 'sftp_host_ed25519_key';
export const HOST_KEY_FILE = 'ssh_host_ed25519_key';

const sshString = (b: Buffer | string): Buffer => {
  const data = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, data]);
};

/**
 * A new Ed25519 key in OpenSSH's private key format (openssh-key-v1, unencrypted: the file is 0600
 * or a database row). Written here from Node's own key pair: ssh2's generator drops the leading
 * zero bytes of a public key that starts with one (about one key in 256), a key it then refuses.
 */
export function generateHostKey(): string {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d as string, 'base64url');
  const pub = Buffer.from(jwk.x as string, 'base64url');
  const publicBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  const check = randomBytes(4);
  let secret = Buffer.concat([check, check, sshString('ssh-ed25519'), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString('file-cloud')]);
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0'), sshString('none'), sshString('none'), sshString(''), count, sshString(publicBlob), sshString(secret)]);
  const lines = body.toString('base64').match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

const generate = generateHostKey;

/** The private key text, or an Error saying the file or row is not an Ed25519 key. */
function checked(text: string, where: string): string {
  const parsed = ssh2.utils.parseKey(text);
  if (parsed instanceof Error || Array.isArray(parsed) || parsed.type !== 'ssh-ed25519' || !parsed.isPrivateKey()) {
    throw new Error(`the SFTP host key in ${where} is not an Ed25519 private key; remove it to make a new one (clients will then warn that the host key changed)`);
  }
  return text;
}

/**
 * The SFTP host key, made on first start: in the database with PostgreSQL, so every node of a
 * deployment shows the same key (a client that reaches another node must not see a "host key
 * changed" warning), else `data/ssh_host_ed25519_key` (mode 0600; processes that start together
 * agree on one key, readOrCreateFile).
 */
export async function loadHostKey(opts: { dataDir: string; store: MetadataStore; shared: boolean }): Promise<string> {
  if (opts.shared) return checked(await opts.store.settings.getOrCreate(SETTING, generate), `the database setting ${SETTING}`);
  const file = join(resolve(opts.dataDir), HOST_KEY_FILE);
  return checked(await readOrCreateFile(file, generate), file);
}

/** `SHA256:…` of the host key, as `ssh-keygen -lf` and a client's first-connection prompt show it. */
export function hostKeyFingerprint(privateKey: string): string {
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error('not a key');
  return sshFingerprint(parsed.getPublicSSH());
}
