import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** A public key for SFTP sign-in, as `GET /api/me/ssh-keys` lists it. */
export type SshKey = {
  readonly id: string;
  readonly name: string;
  readonly algorithm: string;
  /** What `ssh-keygen -lf key.pub` prints: `SHA256:…`. */
  readonly fingerprint: string;
  readonly created: string;
  readonly last_used: string | null;
};

/** SSH keys: sign in to SFTP with the private half (docs/sftp.md). */
export class SshKeysApi {
  constructor(private readonly client: ApiClient) {}

  add(name: string, key: string): Promise<SshKey> {
    return this.client.json<SshKey>(withBase('/api/me/ssh-keys'), { method: 'POST', json: { name, key } });
  }

  async list(signal?: AbortSignal): Promise<SshKey[]> {
    return (await this.client.json<{ keys: SshKey[] }>(withBase('/api/me/ssh-keys'), { signal })).keys;
  }

  async remove(id: string): Promise<void> {
    await this.client.request(withBase(`/api/me/ssh-keys/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }
}
