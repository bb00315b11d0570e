import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { strictBodyValidator } from '../http/strict-validator.js';
import type { AccessRule } from '../domain/access.js';
import type { AccountCaller, AccountService } from '../services/account.js';
import { error, noContent, signedIn, throttled } from './route-schemas.js';
import { json } from '../http/schemas.js';
import { sessionView } from './views.js';

/** The caller of a signed-in route, in the fields the principal keeps (username, userId, sessionId). */
export function callerOf(request: FastifyRequest): AccountCaller {
  const p = request.principal as { userId?: string; username: string; sessionId?: string } | null;
  if (!p?.userId) throw new AppError('unauthorized', 'A valid access token is required.');
  return { userId: p.userId, username: p.username, sessionId: p.sessionId };
}

const sessionSchema = {
  type: 'object',
  required: ['id', 'created_at', 'last_used_at', 'client', 'address', 'current'],
  properties: {
    id: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: 'string', format: 'date-time', description: 'Recorded at refresh and at most once a minute from access-token use.' },
    client: { type: ['string', 'null'], description: 'The User-Agent at sign-in.' },
    address: { type: ['string', 'null'], description: 'The client address last seen.' },
    current: { type: 'boolean', description: 'The session of the access token making this request.' },
  },
} as const;

const codeBody = { type: 'object', required: ['code'], properties: { code: { type: 'string', maxLength: 64, description: 'A 6-digit code from the authenticator app (or, to turn TOTP off, a recovery code).' } } } as const;

/** CONTRACT "Accounts and API": /api/me, own password, own sessions, TOTP. */
/** What the operator turned on that the web UI shows (the Trash page, a file's Versions). */
export type Features = { readonly trashDays: number; readonly versions: boolean };

export function accountRoutes(scope: FastifyInstance, deps: { account: AccountService; features?: Features }): void {
  const { account } = deps;
  const user = { access: { who: 'user' } as AccessRule };
  // Managing the account needs a signed-in session: an app password cannot change the password, see
  // or end sessions, or turn TOTP on or off (docs/security.md).
  const session = { access: { who: 'user', sessionOnly: true } as AccessRule };
  // Password and code checks also count against the login throttle (per client address), before the
  // body is read: a stolen access token cannot guess the password or codes faster than a login could.
  const checked = { access: { who: 'user', sessionOnly: true, throttle: ['login'] } as AccessRule };
  scope.setValidatorCompiler(strictBodyValidator);
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));

  scope.get('/api/me', {
    config: user,
    schema: {
      summary: 'The signed-in user',
      tags: ['Account'],
      response: {
        200: json('Who you are, your usage and quota, whether TOTP is on, and your groups.', {
          type: 'object',
          required: ['username', 'admin', 'used', 'quota', 'totp', 'groups', 'trash_days', 'versions'],
          properties: {
            username: { type: 'string' },
            admin: { type: 'boolean' },
            used: { type: 'integer', description: 'Bytes stored.' },
            quota: { type: ['integer', 'null'], description: 'Bytes allowed; null = no quota.' },
            totp: { type: 'boolean', description: 'Two-factor sign-in (TOTP) is on.' },
            groups: { type: 'array', items: { type: 'string' }, description: 'The groups you belong to, by name.' },
            trash_days: { type: 'integer', description: 'Days a deleted item stays in the trash (--trash-days); 0: deletions are permanent, no trash.' },
            versions: { type: 'boolean', description: 'Replaced files keep their earlier contents (--versions).' },
          },
        }),
        ...signedIn,
      },
    },
  }, async (request) => ({ ...(await account.me(callerOf(request))), trash_days: deps.features?.trashDays ?? 0, versions: deps.features?.versions ?? false }));

  scope.post('/api/me/password', {
    config: checked,
    schema: {
      summary: 'Change your own password',
      description: 'Every other session and every path token of the account stops working; the session making the request stays.',
      tags: ['Account'],
      body: {
        type: 'object',
        required: ['current_password', 'new_password'],
        properties: { current_password: { type: 'string' }, new_password: { type: 'string', description: '8 to 1024 characters.' } },
      },
      response: { 204: noContent, 400: error('A missing or mistyped field, or a new password that breaks the rules (`bad_request`).'), ...signedIn, ...throttled },
    },
  }, async (request, reply) => {
    const body = request.body as { current_password: string; new_password: string };
    await account.changePassword(callerOf(request), body.current_password, body.new_password);
    return reply.code(204).send();
  });

  scope.get('/api/sessions', {
    config: session,
    schema: {
      summary: 'Your sessions',
      tags: ['Account'],
      response: { 200: json('Your sessions, the current one marked.', { type: 'object', required: ['sessions'], properties: { sessions: { type: 'array', items: sessionSchema } } }), ...signedIn },
    },
  }, async (request) => {
    const caller = callerOf(request);
    return { sessions: (await account.sessions(caller)).map((s) => sessionView(s, caller.sessionId)) };
  });

  scope.delete('/api/sessions/:id', {
    config: session,
    schema: {
      summary: 'End one of your sessions',
      description: 'Its refresh token and access tokens stop working at once. Ending the current session is a logout.',
      tags: ['Account'],
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 200 } } },
      response: { 204: noContent, ...signedIn, 404: error('No session of yours has this id (`not_found`).') },
    },
  }, async (request, reply) => {
    await account.revokeSession(callerOf(request), (request.params as { id: string }).id);
    return reply.code(204).send();
  });

  scope.post('/api/me/totp', {
    config: session,
    schema: {
      summary: 'Start setting up two-factor sign-in (TOTP)',
      description: 'A new secret, pending until a code from it is confirmed (POST /api/me/totp/confirm). Calling again replaces a pending secret.',
      tags: ['Account'],
      response: {
        200: json('A new secret, pending until confirmed with a code.', {
          type: 'object',
          required: ['secret', 'otpauth_url'],
          properties: { secret: { type: 'string', description: 'Base32, 160 bits.' }, otpauth_url: { type: 'string', description: 'otpauth://totp/… for a QR code.' } },
        }),
        ...signedIn,
        409: error('TOTP is already on (`already_exists`).'),
      },
    },
  }, async (request) => {
    const { secret, otpauthUrl } = await account.beginTotp(callerOf(request));
    return { secret, otpauth_url: otpauthUrl };
  });

  scope.post('/api/me/totp/confirm', {
    config: checked,
    schema: {
      summary: 'Turn two-factor sign-in on',
      description: 'With a code from the pending secret. Answers the recovery codes, shown this once: each signs in once in place of a code.',
      tags: ['Account'],
      body: codeBody,
      response: {
        200: json('TOTP is on: the recovery codes, shown this once.', { type: 'object', required: ['recovery_codes'], properties: { recovery_codes: { type: 'array', items: { type: 'string' } } } }),
        400: error('No setup is pending, or a malformed body (`bad_request`).'),
        ...signedIn,
        409: error('TOTP is already on (`already_exists`).'),
        ...throttled,
      },
    },
  }, async (request) => ({ recovery_codes: await account.confirmTotp(callerOf(request), (request.body as { code: string }).code) }));

  scope.delete('/api/me/totp', {
    config: checked,
    schema: {
      summary: 'Turn two-factor sign-in off',
      description: 'Needs a current code (or a recovery code). The recovery codes go too.',
      tags: ['Account'],
      body: codeBody,
      response: { 204: noContent, 400: error('TOTP is not on, or a malformed body (`bad_request`).'), ...signedIn, ...throttled },
    },
  }, async (request, reply) => {
    await account.disableTotp(callerOf(request), (request.body as { code: string }).code);
    return reply.code(204).send();
  });
}
