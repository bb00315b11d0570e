import { AppError } from '../domain/errors.js';
import type { SearchInput } from '../services/search.js';
import { sentence } from '../lib/i18n/sentences.js';

const one = (query: Record<string, unknown>, name: string): string | undefined => {
  const v = query[name];
  if (v === undefined) return undefined;
  // ?q=a&q=b: which one was meant is anyone's guess, so neither.
  if (typeof v !== 'string') throw new AppError('bad_request', sentence('apiDetail.giveOnce', { name }));
  return v;
};

/**
 * The query string of GET /api/search as the search service's input: each
 * parameter at most once, `type` one of file/folder, `limit` a whole number
 * in decimal. The service checks the ranges (q's length, limit's bounds).
 */
export function parseSearchQuery(query: unknown): SearchInput {
  const q = (query ?? {}) as Record<string, unknown>;
  const text = one(q, 'q');
  if (text === undefined) throw new AppError('bad_request', sentence('apiDetail.searchText'));
  const type = one(q, 'type');
  if (type !== undefined && type !== 'file' && type !== 'folder') throw new AppError('bad_request', sentence('apiDetail.searchType'));
  const rawLimit = one(q, 'limit');
  if (rawLimit !== undefined && !/^[0-9]{1,7}$/.test(rawLimit)) throw new AppError('bad_request', sentence('apiDetail.limitWhole'));
  return { q: text, path: one(q, 'path'), type, limit: rawLimit === undefined ? undefined : Number(rawLimit) };
}
