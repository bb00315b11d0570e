import type { FastifyInstance } from 'fastify';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from '../domain/search-text.js';
import type { SearchService } from '../services/search.js';
import type { AccessRule } from '../domain/access.js';
import { parseSearchQuery } from '../http/search-query.js';
import { errors, json, type RouteSchema } from '../http/schemas.js';
import { searchResultView } from './views.js';

/** GET /api/search (CONTRACT "Search, thumbnails, usage"), documented in docs/api.md. */
export const SEARCH_SCHEMA: RouteSchema = {
  summary: 'Search your own files and folders by name',
  description:
    'Case- and accent-insensitive substring match on names, from the index. Best matches first: exact name, then prefix, then substring; shallower paths first within each.',
  tags: ['Search'],
  querystring: {
    type: 'object',
    required: ['q'],
    properties: {
      q: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'Text the name must contain.' },
      path: { type: 'string', description: 'Only entries below this folder: /<user>/<folder>.' },
      type: { type: 'string', enum: ['file', 'folder'], description: 'Only files or only folders.' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Most results to return.' },
    },
  },
  response: {
    200: json('Your matching entries, best first.', {
      type: 'object',
      required: ['results', 'truncated'],
      properties: {
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['path', 'name', 'is_file', 'size', 'modified'],
            properties: {
              path: { type: 'string', description: '/<user>/<path>, as in Move.' },
              name: { type: 'string' },
              is_file: { type: 'boolean' },
              size: { type: 'integer' },
              modified: { type: 'string', format: 'date-time' },
            },
          },
        },
        truncated: { type: 'boolean', description: 'More entries match than were returned.' },
      },
    }),
    ...errors({
      400: 'A missing, repeated or bad parameter (`bad_request`).',
      401: 'No valid token, or a `path` in another user\'s tree (`unauthorized`).',
      404: 'No folder at `path` (`not_found`).',
      409: '`path` is a file (`not_a_directory`).',
      503: 'The metadata store cannot be reached (`unavailable`).',
    }),
  },
};

export function searchRoutes(scope: FastifyInstance, deps: { search: SearchService }): void {
  scope.get('/api/search', { config: { access: { who: 'user' } as AccessRule }, schema: SEARCH_SCHEMA }, async (request, reply) => {
    const query = parseSearchQuery(request.query);
    reply.header('cache-control', 'no-store');
    const { results, truncated } = await deps.search.search(request.principal!, query);
    return { results: results.map(searchResultView), truncated };
  });
}
