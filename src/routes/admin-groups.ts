import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { strictBodyValidator } from '../http/strict-validator.js';
import type { GroupService } from '../services/groups.js';
import { adminOnly, error, noContent } from './route-schemas.js';
import { groupView } from './views.js';
import { json } from '../http/schemas.js';

const groupSchema = {
  type: 'object',
  required: ['name', 'members', 'created_at'],
  properties: {
    name: { type: 'string' },
    members: { type: 'array', items: { type: 'string' }, description: 'Usernames, in code-point order.' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 200 } } } as const;
const usernames = { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 200 } } as const;
const TAGS = ['Groups (admin)'];

/** Groups, admin-managed, with exactly the CLI's rules (the same GroupService; docs/api.md "Groups"). */
export function adminGroupRoutes(scope: FastifyInstance, deps: { groups: GroupService }): void {
  const { groups } = deps;
  const config = { access: { who: 'admin' } as AccessRule };
  scope.setValidatorCompiler(strictBodyValidator);
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));

  scope.get('/api/admin/groups', {
    config,
    schema: {
      summary: 'All groups',
      tags: TAGS,
      response: { 200: json('Every group with its members.', { type: 'object', required: ['groups'], properties: { groups: { type: 'array', items: groupSchema } } }), ...adminOnly },
    },
  }, async () => ({ groups: (await groups.list()).map(groupView) }));

  scope.post('/api/admin/groups', {
    config,
    schema: {
      summary: 'Create a group',
      description: 'As `file-cloud group add` does; `members` (optional) are added at once.',
      tags: TAGS,
      body: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', description: '1 to 64 of A-Z a-z 0-9 . _ -, not starting with ".".' }, members: usernames },
      },
      response: { 201: json('Created.', groupSchema), 400: error('A bad name, or an unknown member (`bad_request`).'), ...adminOnly, 409: error('The name is taken (`already_exists`).') },
    },
  }, async (request, reply) => {
    const body = request.body as { name: string; members?: string[] };
    await groups.add(body.name);
    if (body.members && body.members.length > 0) {
      try {
        return reply.code(201).send(groupView(await groups.changeMembers(body.name, body.members, [])));
      } catch (e) {
        // All or nothing: a group made with a member list that was refused does not stay behind.
        await groups.remove(body.name);
        throw e;
      }
    }
    return reply.code(201).send(groupView(await groups.get(body.name)));
  });

  scope.patch('/api/admin/groups/:name', {
    config,
    schema: {
      summary: 'Add and remove members',
      description: 'All or nothing: an unknown user changes nothing. Access through the group ends at once for a removed member, on every node.',
      tags: TAGS,
      params: nameParams,
      body: { type: 'object', properties: { add: usernames, remove: usernames } },
      response: { 200: json('The group as it is now.', groupSchema), 400: error('An unknown user or a malformed body (`bad_request`).'), ...adminOnly, 404: error('No such group (`not_found`).') },
    },
  }, async (request) => {
    const body = request.body as { add?: string[]; remove?: string[] };
    return groupView(await groups.changeMembers((request.params as { name: string }).name, body.add ?? [], body.remove ?? []));
  });

  scope.delete('/api/admin/groups/:name', {
    config,
    schema: {
      summary: 'Remove a group',
      description: 'What was granted to the group ends at once.',
      tags: TAGS,
      params: nameParams,
      response: { 204: noContent, ...adminOnly, 404: error('No such group (`not_found`).') },
    },
  }, async (request, reply) => {
    await groups.remove((request.params as { name: string }).name);
    return reply.code(204).send();
  });
}
