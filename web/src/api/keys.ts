import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** An app password (API key) as `GET /api/keys` lists it; the key itself is never listed. */
export type ApiKey = {
  readonly id: string;
  readonly name: string;
  readonly read_only: boolean;
  readonly created: string;
  /** ISO date, or null for a key that never expires. */
  readonly expires: string | null;
  /** ISO date of its last use (kept to the minute), or null when never used. */
  readonly last_used: string | null;
};

/** `POST /api/keys` answers the key once, with its description. */
export type NewApiKey = ApiKey & { readonly key: string };

export type KeyOptions = { name: string; readOnly: boolean; /** Seconds from now; undefined = never. */ expiresIn?: number };

/** App passwords: for scripts (Bearer) and WebDAV clients (Basic), instead of the account password. */
export class KeysApi {
  constructor(private readonly client: ApiClient) {}

  create(opts: KeyOptions): Promise<NewApiKey> {
    const json: Record<string, unknown> = { name: opts.name };
    if (opts.readOnly) json.read_only = true;
    if (opts.expiresIn !== undefined) json.expires_in = opts.expiresIn;
    return this.client.json<NewApiKey>(withBase('/api/keys'), { method: 'POST', json });
  }

  async list(signal?: AbortSignal): Promise<ApiKey[]> {
    return (await this.client.json<{ keys: ApiKey[] }>(withBase('/api/keys'), { signal })).keys;
  }

  async revoke(id: string): Promise<void> {
    await this.client.request(withBase(`/api/keys/${encodeURIComponent(id)}`), { method: 'DELETE' });
  }
}
