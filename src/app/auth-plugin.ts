import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { AuthKind, Principal } from '../domain/principal.js';
import { parseStoragePath } from '../domain/storage-path.js';
import type { AuthService } from '../services/auth.js';
import type { PathTokenService } from '../services/path-token-service.js';
import { rawStoragePath } from './request-url.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking; set by the auth hook on routes that declare `config.auth`. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Credential kinds the route accepts; absent = public route. */
    auth?: readonly AuthKind[];
    /**
     * Refuse a missing or invalid credential with 404 instead of 401: for
     * resources whose very existence is private (a tus upload's URL).
     */
    hideOnAuthFailure?: boolean;
  }
}

/**
 * One hook resolves the principal, once per request, before the body is
 * read (so an unauthenticated upload is refused before any byte is stored),
 * and refuses the request unless the route accepts that kind of credential.
 * Routes then only check ownership; handlers never parse auth headers.
 */
export function installAuth(app: FastifyInstance, deps: { auth: AuthService; pathTokens: PathTokenService; basePath?: string }): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const accepted = request.routeOptions.config.auth;
    if (!accepted) return;
    // Node keeps only the first of repeated Authorization headers, and a proxy in front may keep
    // another: refuse the ambiguity rather than authenticate a request two parties read differently.
    if (headerCount(request.raw.rawHeaders, 'authorization') > 1) throw new AppError('bad_request', 'Send at most one Authorization header.');
    const principal = await resolvePrincipal(request, accepted, deps);
    if (!principal || !accepted.includes(principal.kind)) {
      if (request.routeOptions.config.hideOnAuthFailure) throw new AppError('not_found', 'Nothing exists at this address.');
      throw new AppError('unauthorized', 'A valid access token is required.');
    }
    request.principal = principal;
  });
}

function headerCount(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) n++;
  return n;
}

/** `Bearer <token>` or, as older clients send it, the bare token. */
export function accessTokenFrom(header: string): string {
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? (m[1] as string) : header.trim();
}

async function resolvePrincipal(
  request: FastifyRequest,
  accepted: readonly AuthKind[],
  deps: { auth: AuthService; pathTokens: PathTokenService; basePath?: string },
): Promise<Principal | undefined> {
  const header = request.headers.authorization;
  // An Authorization header is decisive: a bad one is not rescued by a ?token=.
  if (header !== undefined) return deps.auth.authenticate(accessTokenFrom(header), request.ip);
  if (!accepted.includes('pathToken') || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  const raw = rawStoragePath(request.url, deps.basePath);
  if (typeof token !== 'string' || raw === undefined) return undefined;
  let key;
  try {
    key = parseStoragePath(raw).key;
  } catch {
    return undefined;
  }
  return deps.pathTokens.verify(token, key);
}
