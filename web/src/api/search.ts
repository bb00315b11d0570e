import type { ApiClient } from './client';
import { withBase } from '../lib/base';

/** One result of GET /api/search (CONTRACT "Search, thumbnails, usage"). */
export type SearchResult = { readonly path: string; readonly name: string; readonly is_file: boolean; readonly size: number; readonly modified: string };
export type SearchAnswer = { readonly results: readonly SearchResult[]; readonly truncated: boolean };

/** Results the search box asks for: enough to choose from, few enough to scan. */
export const SEARCH_LIMIT = 30;

export function searchNames(client: ApiClient, q: string, signal?: AbortSignal): Promise<SearchAnswer> {
  const query = new URLSearchParams({ q, limit: String(SEARCH_LIMIT) });
  return client.json<SearchAnswer>(withBase(`/api/search?${query.toString()}`), { signal });
}

/** A result's place: the segments of its folder below the user's root, and its own name. `/alice/a/b.txt` → [['a'], 'b.txt']. */
export function resultPlace(path: string): { folder: string[]; name: string } {
  const parts = path.split('/').slice(2);
  const name = parts.pop() ?? '';
  return { folder: parts, name };
}
