import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from '../domain/search-text.js';
import type { SearchInput, SearchService } from '../services/search.js';

const errorBody = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

/** GET /api/search (CONTRACT "Search, thumbnails, usage"), documented in docs/api.md. */
export const SEARCH_SCHEMA = {
  summary: 'Search your own files and folders by name',
  description:
    'Case- and accent-insensitive substring match on names, from the index. Best matches first: exact name, then prefix, then substring; shallower paths first within each.',
  tags: ['search'],
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
    200: {
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
    },
    400: errorBody,
    401: errorBody,
    404: errorBody,
    409: errorBody,
    500: errorBody,
    503: errorBody,
  },
} as const;

export function searchRoutes(scope: FastifyInstance, deps: { search: SearchService }): void {
  scope.get('/api/search', { config: { auth: ['user'] as const }, schema: SEARCH_SCHEMA, attachValidation: true }, async (request, reply) => {
    // The schema's own words ("querystring/limit must be <= 1000") in the contract's error body.
    if (request.validationError) throw new AppError('bad_request', `Invalid search: ${request.validationError.message}.`);
    const query = request.query as SearchInput;
    reply.header('cache-control', 'no-store');
    return deps.search.search(request.principal!, query);
  });
}
