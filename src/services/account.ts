import { AppError } from '../domain/errors.js';
import type { Clock } from '../lib/clock.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { Session } from '../store/sessions.js';
import type { User } from '../store/users.js';
import type { AuthService } from './auth.js';
import type { SecondFactor } from './second-factor.js';
import type { AccountUsage } from './usage.js';
import { checkPassword, type UserService } from './users.js';

/** The signed-in user as the account endpoints know them (a session, an app password …). */
export type AccountCaller = { readonly userId: string; readonly username: string; readonly sessionId?: string | undefined };

export type AccountService = ReturnType<typeof createAccountService>;

/** Self-service for a signed-in user: CONTRACT "Accounts and API" (/api/me, own password, own sessions, TOTP). */
export function createAccountService(deps: { store: MetadataStore; auth: AuthService; users: UserService; secondFactor: SecondFactor; usage: AccountUsage; clock: Clock }) {
  const { store } = deps;

  /** The caller's user row, read fresh (a removed user's token is refused before this; a race ends as 401). */
  async function self(caller: AccountCaller): Promise<User> {
    const user = await store.users.getByName(caller.username);
    if (!user || user.id !== caller.userId) throw new AppError('unauthorized', 'A valid access token is required.');
    return user;
  }

  return {
    async me(caller: AccountCaller) {
      const user = await self(caller);
      const { used, quota } = await deps.usage.of(user);
      return { username: user.username, admin: user.isAdmin, used, quota, totp: user.totpEnabled, groups: await deps.store.groups.groupsOf(user.username) };
    },

    /**
     * Changes the caller's password after checking the current one. Every other session and
     * every path token ends (a new auth epoch); the caller's own session stays.
     */
    async changePassword(caller: AccountCaller, currentPassword: string, newPassword: string): Promise<void> {
      checkPassword(newPassword);
      const user = await deps.auth.verifyPassword(caller.username, currentPassword);
      if (!user || user.id !== caller.userId) throw new AppError('invalid_credentials', 'The current password is wrong.');
      await deps.users.setPassword(user.username, newPassword, caller.sessionId || undefined);
    },

    /** The caller's live sessions; the one that asks is `caller.sessionId`. */
    async sessions(caller: AccountCaller): Promise<Session[]> {
      return store.sessions.listByUser(caller.userId, deps.clock.now());
    },

    /** Ends one of the caller's sessions (their current one too: that is a logout). Another user's → 404. */
    async revokeSession(caller: AccountCaller, sessionId: string): Promise<void> {
      if (!(await store.sessions.deleteOwned(sessionId, caller.userId))) throw new AppError('not_found', 'You have no session with this id.');
    },

    async beginTotp(caller: AccountCaller) {
      return deps.secondFactor.begin(await self(caller));
    },

    /** Turns TOTP on; the recovery codes, shown once. */
    async confirmTotp(caller: AccountCaller, code: string): Promise<string[]> {
      return deps.secondFactor.confirm((await self(caller)).id, code);
    },

    async disableTotp(caller: AccountCaller, code: string): Promise<void> {
      await deps.secondFactor.disable((await self(caller)).id, code);
    },
  };
}
