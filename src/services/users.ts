import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { isValidUsername } from '../domain/names.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import { LastAdminError, type User } from '../store/users.js';
import { StoreConflictError, type MetadataStore } from '../store/metadata-store.js';
import type { PasswordHasher } from './passwords.js';
import { endLocksBeyondGrants } from './grants.js';
import { sentence } from '../lib/i18n/sentences.js';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export const USERNAME_RULE = sentence('apiPart.accountNameRule');

export function checkUsername(name: string): void {
  if (!isValidUsername(name)) throw new AppError('bad_request', sentence('apiDetail.usernameInvalid', { name, rule: USERNAME_RULE }));
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new AppError('bad_request', sentence('apiDetail.passwordShort', { min: MIN_PASSWORD_LENGTH }));
  if (password.length > MAX_PASSWORD_LENGTH) throw new AppError('bad_request', sentence('apiDetail.passwordLong', { max: MAX_PASSWORD_LENGTH }));
}

/** The password hash of an account without a password: not a hash format, so no password verifies against it. */
export const NO_PASSWORD = '!none';

const newEpoch = () => randomBytes(16).toString('base64url');

/** A random password for the first-run admin: 24 characters, ~143 bits. */
export const generatePassword = () => randomBytes(18).toString('base64url');

export type UserService = ReturnType<typeof createUserService>;

const lastAdmin = (username: string) =>
  new AppError('last_admin', `"${username}" is the last administrator; make another user an administrator first.`);

/**
 * Account management: the one set of rules for the CLI, first run and the admin API
 * (/api/admin/users). Revocation is immediate: sessions live in the store, path tokens
 * are bound to the auth epoch a password change replaces. No change may leave the
 * server without an administrator.
 */
export function createUserService(deps: { store: MetadataStore; backend: StorageBackend; hasher: PasswordHasher; clock: Clock }) {
  const { store, backend, hasher } = deps;
  const rootOf = (username: string) => ({ user: username, segments: [] as string[] });
  const noUser = (username: string) => new AppError('not_found', `There is no user "${username}".`);

  /**
   * A user's files with their index entries: the index answers writes on S3 (CONTRACT "Backends and
   * nodes"), and a command deleting here has no listener to forget them, so a new account of the
   * same name would find names taken that are gone.
   */
  async function deleteTree(username: string): Promise<void> {
    try {
      await backend.delete(rootOf(username), { recursive: true });
    } catch (e) {
      if ((e as { code?: string }).code !== 'not_found') throw e;
    }
    await store.search.deleteWithin(username, '');
  }

  return {
    async add(username: string, password: string, isAdmin: boolean): Promise<User> {
      checkUsername(username);
      checkPassword(password);
      const passwordHash = await hasher.hash(password);
      let user: User;
      try {
        user = await store.users.create({ username, passwordHash, isAdmin, authEpoch: newEpoch(), now: deps.clock.now() });
      } catch (e) {
        if (e instanceof StoreConflictError) throw new AppError('already_exists', `User "${username}" already exists.`);
        throw e;
      }
      await backend.mkdir(rootOf(username), { parents: true, existOk: true });
      return user;
    },

    /**
     * An account that signs in through the OpenID provider only (src/services/oidc.ts): no password
     * (a hash no password matches: verify() still does the same work), so WebDAV and scripts use app passwords.
     */
    async addExternal(username: string, isAdmin: boolean): Promise<User> {
      checkUsername(username);
      let user: User;
      try {
        user = await store.users.create({ username, passwordHash: NO_PASSWORD, isAdmin, authEpoch: newEpoch(), now: deps.clock.now() });
      } catch (e) {
        if (e instanceof StoreConflictError) throw new AppError('already_exists', `User "${username}" already exists.`);
        throw e;
      }
      await backend.mkdir(rootOf(username), { parents: true, existOk: true });
      return user;
    },

    /** `user sso NAME on`: the next single sign-on whose username claim is this name links the account to that identity. */
    async setLinkPending(username: string, pending: boolean): Promise<void> {
      const user = await store.users.getByName(username);
      if (!user) throw noUser(username);
      if (pending && (await store.oidc.linkOf(user.id))) throw new AppError('already_exists', `"${username}" is linked to single sign-on already.`);
      await store.oidc.setLinkPending(user.id, pending);
    },

    /** Marks an account local: under --oidc-only it keeps password sign-in (a break-glass administrator). */
    async setLocal(username: string, local: boolean): Promise<void> {
      const user = await store.users.getByName(username);
      if (!user) throw noUser(username);
      await store.oidc.setLocal(user.id, local);
    },

    async remove(username: string, deleteFiles: boolean): Promise<void> {
      let removed: boolean;
      try {
        removed = await store.users.delete(username, { keepAnAdmin: true });
      } catch (e) {
        if (e instanceof LastAdminError) throw lastAdmin(username);
        throw e;
      }
      if (!removed) throw noUser(username);
      // Their grants are gone (given and received), and with them the WebDAV locks they held through
      // them; the locks in their own tree go too, or a new account of the same name would find them.
      await endLocksBeyondGrants(store, [username]);
      await store.davLocks.deleteWithin(username, '');
      // The trash and the versions are the server's, not files the administrator may want kept: they go with
      // the account either way, or a new account of the same name would find them (issue 34).
      if (isValidUsername(username)) {
        await store.trash.deleteOwner(username);
        await store.versions.deleteOwner(username);
        await backend.trash.removeOwner(username);
        await backend.versions.removeOwner(username);
      }
      if (deleteFiles && isValidUsername(username)) await deleteTree(username);
    },

    /**
     * Undoes first run after a failed start: removes the admin it created, with their storage root.
     * The last-admin rule does not apply — before the start failed nobody else existed to keep.
     */
    async undoFirstAdmin(username: string): Promise<void> {
      await store.users.delete(username);
      await deleteTree(username);
    },

    /** Sets a password; ends every session of the user but `keepSessionId` (a user changing their own keeps theirs). */
    async setPassword(username: string, password: string, keepSessionId?: string): Promise<void> {
      checkPassword(password);
      const passwordHash = await hasher.hash(password);
      if (!(await store.users.setPassword(username, passwordHash, newEpoch(), keepSessionId))) throw noUser(username);
    },

    /** Grants or takes the admin right; never from the last administrator, nor to a disabled user. */
    async setAdmin(username: string, isAdmin: boolean): Promise<void> {
      if (isAdmin && (await store.users.getByName(username))?.disabled) {
        throw new AppError('admin_must_be_enabled', `"${username}" is disabled; enable them before making them an administrator.`);
      }
      let done: boolean;
      try {
        done = await store.users.setAdmin(username, isAdmin);
      } catch (e) {
        if (e instanceof LastAdminError) throw lastAdmin(username);
        throw e;
      }
      if (!done) throw noUser(username);
    },

    /**
     * Disables or enables a user. An administrator cannot be disabled (take the right first):
     * so "the last administrator" is always one who can sign in.
     */
    async setDisabled(username: string, disabled: boolean): Promise<void> {
      const user = await store.users.getByName(username);
      if (!user) throw noUser(username);
      if (disabled && user.isAdmin) throw new AppError('admin_must_be_enabled', `"${username}" is an administrator; take the administrator right away before disabling them.`);
      if (!(await store.users.setDisabled(username, disabled))) throw noUser(username);
    },

    async get(username: string): Promise<User> {
      const user = await store.users.getByName(username);
      if (!user) throw noUser(username);
      return user;
    },

    list: () => store.users.list(),

    /**
     * First run: with no users at all, creates `admin` with the given password
     * or a random one. Returns the password to print once, or undefined when
     * users already exist.
     */
    async ensureFirstAdmin(password: string | undefined): Promise<{ username: string; password: string; generated: boolean } | undefined> {
      if ((await store.users.count()) > 0) return undefined;
      const pw = password || generatePassword();
      try {
        await this.add('admin', pw, true);
      } catch (e) {
        // Another process (a second server, the CLI) created it meanwhile: not first run after all.
        if (e instanceof AppError && e.code === 'already_exists') return undefined;
        throw e;
      }
      return { username: 'admin', password: pw, generated: !password };
    },
  };
}
