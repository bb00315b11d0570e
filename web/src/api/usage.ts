import { withBase } from '../lib/base';
import type { ApiClient } from './client';

/** GET /api/usage: bytes in use and the quota (null when there is none). */
export type Usage = { readonly used: number; readonly quota: number | null };

export const fetchUsage = (client: ApiClient, signal?: AbortSignal): Promise<Usage> => client.json<Usage>(withBase('/api/usage'), { signal });
