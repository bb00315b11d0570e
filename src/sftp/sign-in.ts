import { timingSafeEqual } from 'node:crypto';
import ssh2, { type AuthContext } from 'ssh2';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Clock } from '../lib/clock.js';
import type { BasicAuthenticator } from '../dav/basic-auth.js';
import type { SshKeyService } from '../services/ssh-keys.js';
import type { AuditEvent } from '../services/audit.js';
import type { RateLimiter } from '../store/rate-limiter.js';

export type SftpSignInDeps = {
  /** The account-or-app-password check of WebDAV: the same throttle, TOTP and disabled rules. */
  readonly basic: BasicAuthenticator;
  readonly sshKeys: SshKeyService;
  /** The login throttle, per client address, shared with HTTP sign-ins; undefined with --dev. */
  readonly throttle: RateLimiter | undefined;
  readonly clock: Clock;
  /** Awaited before the client is answered, so a client told the outcome finds the entry. */
  readonly audit: (event: AuditEvent) => Promise<void>;
};

/** The address as HTTP sees it (an IPv4 client on a dual-stack socket is its IPv4 address), so both count in one bucket. */
export const plainAddress = (ip: string): string => (ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip);

const METHODS: ('publickey' | 'password')[] = ['publickey', 'password'];

/**
 * Sign-in for one SSH connection. A password is the account's or an app password (`fck_…`), checked
 * by WebDAV's authenticator: every check counts towards the login throttle of the client's address
 * (shared with /auth/login), a disabled account or --oidc-only refuse it, and an account with TOTP
 * on is refused its password alone (it signs in with a key or an app password). A public key is one
 * the user added through /api/me/ssh-keys, and the client must prove it holds the private half.
 * Refused keys count towards the throttle once per connection (a client offers its keys in turn).
 * Once throttled, the connection is refused everything and closed.
 */
export function createSftpSignIn(deps: SftpSignInDeps) {
  return function forConnection(rawIp: string, onThrottled: () => void) {
    const ip = plainAddress(rawIp);
    let throttled = false;
    let keyCounted = false;
    const fail = (username: string, reason: string, via: string) =>
      deps.audit({ type: 'login.failed', actor: username.slice(0, 200), target: username.slice(0, 200), address: ip, outcome: 'failure', detail: { method: 'sftp', via, reason } });
    const succeed = (p: Principal, via: string) => deps.audit({ type: 'login.succeeded', actor: p.username, target: p.username, address: ip, outcome: 'success', detail: { method: 'sftp', via } });
    const stop = (ctx: AuthContext) => {
      throttled = true;
      ctx.reject([]);
      onThrottled();
    };

    async function countKey(): Promise<boolean> {
      if (keyCounted) return true;
      keyCounted = true;
      return ((await deps.throttle?.hit(ip, deps.clock.now())) ?? 0) === 0;
    }

    /** The principal the context proves, or undefined; rejects or accepts the context itself. */
    return async function authenticate(ctx: AuthContext): Promise<Principal | undefined> {
      if (throttled) {
        ctx.reject([]);
        return undefined;
      }
      if (ctx.method === 'password') {
        let principal: Principal | undefined;
        try {
          principal = await deps.basic.authenticate(Buffer.from(`${ctx.username}:${ctx.password}`).toString('base64'), ip);
        } catch (e) {
          if (e instanceof AppError && e.code === 'rate_limited') return void stop(ctx);
          if (e instanceof AppError && e.code === 'unauthorized') {
            // The right password of an account with a second factor: not enough alone.
            await fail(ctx.username, 'totp_required', 'password');
            return void ctx.reject(['publickey']);
          }
          throw e;
        }
        if (!principal) return void ctx.reject(METHODS);
        await succeed(principal, principal.kind === 'user' && principal.via === 'key' ? 'app_password' : 'password');
        ctx.accept();
        return principal;
      }
      if (ctx.method === 'publickey') {
        const principal = await deps.sshKeys.principalFor(ctx.username, keyType(ctx.key.data), ctx.key.data);
        if (!principal) {
          if (!(await countKey())) return void stop(ctx);
          return void ctx.reject(METHODS);
        }
        // Without a signature the client only asks whether the key would do (RFC 4252 §7).
        if (!ctx.signature || !ctx.blob) {
          ctx.accept();
          return undefined;
        }
        if (!verifies(ctx.key.data, ctx.blob, ctx.signature, ctx.hashAlgo)) {
          await fail(ctx.username, 'invalid_credentials', 'ssh_key');
          if (!(await countKey())) return void stop(ctx);
          return void ctx.reject(METHODS);
        }
        await succeed(principal, 'ssh_key');
        ctx.accept();
        return principal;
      }
      ctx.reject(METHODS);
      return undefined;
    };
  };
}

/** The type named inside a key blob (its first SSH string), or '' when malformed. */
function keyType(blob: Buffer): string {
  if (blob.length < 4) return '';
  const len = blob.readUInt32BE(0);
  return len <= blob.length - 4 ? blob.subarray(4, 4 + len).toString('latin1') : '';
}

/** Whether `signature` over `data` was made by the private half of the key `blob`. */
function verifies(blob: Buffer, data: Buffer, signature: Buffer, hashAlgo: string | undefined): boolean {
  const key = ssh2.utils.parseKey(blob);
  if (key instanceof Error || Array.isArray(key)) return false;
  const pub = key.getPublicSSH();
  if (pub.length !== blob.length || !timingSafeEqual(pub, blob)) return false;
  return key.verify(data, signature, hashAlgo) === true;
}
