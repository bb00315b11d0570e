import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { isValidUsername } from '../domain/names.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import { StoreConflictError, type MetadataStore, type User } from '../store/types.js';
import type { PasswordHasher } from './passwords.js';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export const USERNAME_RULE = '1 to 64 characters of letters A-Z a-z, digits, ".", "_" and "-", not starting with "."';

export function checkUsername(name: string): void {
  if (!isValidUsername(name)) throw new AppError('bad_request', `Invalid username "${name}": use ${USERNAME_RULE}.`);
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new AppError('bad_request', `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new AppError('bad_request', `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`);
}

const newEpoch = () => randomBytes(16).toString('base64url');

/** A random password for the first-run admin: 24 characters, ~143 bits. */
export const generatePassword = () => randomBytes(18).toString('base64url');

export type UserService = ReturnType<typeof createUserService>;

/** Account management used by the CLI and first run. Revocation is immediate: sessions live in the store. */
export function createUserService(deps: { store: MetadataStore; backend: StorageBackend; hasher: PasswordHasher; clock: Clock }) {
  const { store, backend, hasher } = deps;
  const rootOf = (username: string) => ({ user: username, segments: [] as string[] });

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

    async remove(username: string, deleteFiles: boolean): Promise<void> {
      if (!(await store.users.delete(username))) throw new AppError('not_found', `There is no user "${username}".`);
      if (deleteFiles && isValidUsername(username)) {
        try {
          await backend.delete(rootOf(username), { recursive: true });
        } catch (e) {
          if ((e as { code?: string }).code !== 'not_found') throw e;
        }
      }
    },

    async setPassword(username: string, password: string): Promise<void> {
      checkPassword(password);
      const passwordHash = await hasher.hash(password);
      if (!(await store.users.setPassword(username, passwordHash, newEpoch()))) throw new AppError('not_found', `There is no user "${username}".`);
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
