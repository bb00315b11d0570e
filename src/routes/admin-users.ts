import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { strictBodyValidator } from '../http/strict-validator.js';
import type { User } from '../store/users.js';
import type { AccountUsage } from '../services/usage.js';
import type { UserService } from '../services/users.js';
import { adminOnly, error, noContent } from './route-schemas.js';
import { json } from '../http/schemas.js';

const userSchema = {
  type: 'object',
  required: ['username', 'admin', 'disabled', 'totp', 'used', 'quota', 'created_at'],
  properties: {
    username: { type: 'string' },
    admin: { type: 'boolean' },
    disabled: { type: 'boolean', description: 'A disabled user cannot sign in; their tokens, keys and share links stop working.' },
    totp: { type: 'boolean', description: 'Two-factor sign-in is on.' },
    used: { type: 'integer', description: 'Bytes stored.' },
    quota: { type: ['integer', 'null'], description: 'Bytes allowed; null = no quota.' },
    created_at: { type: 'string', format: 'date-time' },
    sign_in: { type: 'string', enum: ['password', 'sso'], description: 'How the user signs in: with a password, or through the OpenID provider (single sign-on; no password, app passwords for WebDAV).' },
    local: { type: 'boolean', description: 'Keeps password sign-in under --oidc-only (`file-cloud user local NAME on`).' },
  },
} as const;

const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 200 } } } as const;

/** How a user signs in (single sign-on link, local mark; src/store/oidc-repo.ts). */
export type SignInOf = (userId: string) => Promise<{ sso: boolean; local: boolean }>;

/** Largest quota accepted: what a JSON number holds exactly (8 PiB). */
const MAX_QUOTA = Number.MAX_SAFE_INTEGER;

/**
 * CONTRACT "Accounts and API", admin: the users API, with exactly the CLI's rules (the same
 * UserService: name and password rules, revocation on password reset and removal, never
 * without an administrator).
 */
export function adminUserRoutes(scope: FastifyInstance, deps: { users: UserService; usage: AccountUsage; signIn?: SignInOf }): void {
  const { users, usage } = deps;
  const config = { access: { who: 'admin' } as AccessRule };
  scope.setValidatorCompiler(strictBodyValidator);
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));

  const view = async (u: User) => {
    const { used, quota } = await usage.of(u);
    const how = deps.signIn ? await deps.signIn(u.id) : { sso: false, local: false };
    return { username: u.username, admin: u.isAdmin, disabled: u.disabled, totp: u.totpEnabled, used, quota, created_at: new Date(u.createdAt).toISOString(), sign_in: how.sso ? 'sso' : 'password', local: how.local };
  };

  scope.get('/api/admin/users', {
    config,
    schema: {
      summary: 'All users',
      tags: ['Users (admin)'],
      response: { 200: json('Every user.', { type: 'object', required: ['users'], properties: { users: { type: 'array', items: userSchema } } }), ...adminOnly },
    },
  }, async () => {
    const all = await users.list();
    // A few at a time: each user's figures are a query of their own.
    const out: Awaited<ReturnType<typeof view>>[] = [];
    for (let i = 0; i < all.length; i += 4) out.push(...(await Promise.all(all.slice(i, i + 4).map(view))));
    return { users: out };
  });

  scope.post('/api/admin/users', {
    config,
    schema: {
      summary: 'Create a user',
      description: 'Creates the user and their storage root, as `file-cloud user add` does.',
      tags: ['Users (admin)'],
      body: {
        type: 'object',
        required: ['username', 'password'],
        properties: {
          username: { type: 'string', description: '1 to 64 of A-Z a-z 0-9 . _ -, not starting with ".".' },
          password: { type: 'string', description: '8 to 1024 characters.' },
          admin: { type: 'boolean', default: false },
        },
      },
      response: { 201: json('Created.', userSchema), 400: error('A bad username or password (`bad_request`).'), ...adminOnly, 409: error('The name is taken (`already_exists`).') },
    },
  }, async (request, reply) => {
    const body = request.body as { username: string; password: string; admin?: boolean };
    const created = await users.add(body.username, body.password, body.admin === true);
    return reply.code(201).send(await view(created));
  });

  scope.patch('/api/admin/users/:name', {
    config,
    schema: {
      summary: 'Change a user',
      description:
        'Any of: a new password (ends all their sessions and path tokens), the admin right, a quota, disabled. ' +
        'Applied in the order admin, disabled, quota, password; a refused change stops the ones after it.',
      tags: ['Users (admin)'],
      params: nameParams,
      body: {
        type: 'object',
        properties: {
          password: { type: 'string' },
          admin: { type: 'boolean' },
          quota: { type: ['integer', 'null'], minimum: 0, maximum: MAX_QUOTA, description: 'Bytes; null removes the quota.' },
          disabled: { type: 'boolean' },
        },
      },
      response: {
        200: json('The user as changed.', userSchema),
        400: error('A bad field (`bad_request`).'),
        ...adminOnly,
        404: error('No such user (`not_found`).'),
        409: error('The last administrator would lose the right (`last_admin`), or an administrator would be disabled (`admin_must_be_enabled`).'),
        503: error('Quotas are not available on this server yet (`unavailable`).'),
      },
    },
  }, async (request) => {
    const { name } = request.params as { name: string };
    const body = (request.body ?? {}) as { password?: string; admin?: boolean; quota?: number | null; disabled?: boolean };
    const user = await users.get(name);
    // Enabling before granting and demoting before disabling, so each step meets the rule
    // "administrators are enabled users" on its own.
    if (body.disabled === false) await users.setDisabled(name, false);
    if (body.admin !== undefined) await users.setAdmin(name, body.admin);
    if (body.disabled === true) await users.setDisabled(name, true);
    if (body.quota !== undefined) await usage.setQuota(user, body.quota);
    if (body.password !== undefined) await users.setPassword(name, body.password);
    return view(await users.get(name));
  });

  scope.delete('/api/admin/users/:name', {
    config,
    schema: {
      summary: 'Remove a user',
      description: 'Their sessions, path tokens and share links end at once. Their files stay unless `delete_files=true`.',
      tags: ['Users (admin)'],
      params: nameParams,
      querystring: { type: 'object', properties: { delete_files: { type: 'boolean', default: false } } },
      response: { 204: noContent, ...adminOnly, 404: error('No such user (`not_found`).'), 409: error('The user is the last administrator (`last_admin`).') },
    },
  }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await users.remove(name, (request.query as { delete_files?: boolean }).delete_files === true);
    return reply.code(204).send();
  });
}
