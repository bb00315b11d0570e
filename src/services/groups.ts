import { randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { isValidUsername } from '../domain/names.js';
import type { Clock } from '../lib/clock.js';
import type { Group } from '../store/groups.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { endLocksBeyondGrants } from './grants.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Group names follow the username rule, so `group:<name>` and `user:<name>` read alike. */
export const GROUP_NAME_RULE = sentence('apiPart.accountNameRule');

export type GroupService = ReturnType<typeof createGroupService>;

/**
 * Groups of accounts, managed by admins: the one set of rules for the CLI
 * (`file-cloud group ...`) and the admin API (/api/admin/groups). Membership
 * is read from the store on every access decision, so a change holds on
 * every node and worker at once.
 */
export function createGroupService(deps: { store: MetadataStore; clock: Clock }) {
  const { store } = deps;
  const noGroup = (name: string) => new AppError('not_found', `There is no group "${name}".`);
  const checkName = (name: unknown): string => {
    if (typeof name !== 'string' || !isValidUsername(name)) throw new AppError('bad_request', sentence('apiDetail.groupNameInvalid', { rule: GROUP_NAME_RULE }));
    return name;
  };

  return {
    async add(name: string): Promise<Group> {
      checkName(name);
      if (!(await store.groups.create(randomUUID(), name, deps.clock.now()))) throw new AppError('already_exists', `A group "${name}" exists already.`);
      return (await store.groups.get(name)) as Group;
    },

    /** Removes the group and its grants, with the locks its members held through them. */
    async remove(name: string): Promise<void> {
      const members = (await store.groups.get(name))?.members ?? [];
      if (!(await store.groups.delete(name))) throw noGroup(name);
      await endLocksBeyondGrants(store, members);
    },

    async list(): Promise<Group[]> {
      return store.groups.list();
    },

    async get(name: string): Promise<Group> {
      const g = await store.groups.get(name);
      if (!g) throw noGroup(name);
      return g;
    },

    /**
     * Adds and removes members (usernames); all or nothing: an unknown user changes nothing (400).
     * A member who leaves loses the group's grants, and the locks held through them.
     */
    async changeMembers(name: string, add: readonly string[], remove: readonly string[]): Promise<Group> {
      const changed = await store.groups.changeMembers(name, add, remove);
      if (!changed) throw noGroup(name);
      if (changed.unknown.length > 0) throw new AppError('bad_request', sentence('apiDetail.groupNoSuchUsers', { users: changed.unknown.map((u) => `"${u}"`).join(', ') }));
      await endLocksBeyondGrants(store, remove);
      return this.get(name);
    },

    /** The groups `username` belongs to (GET /api/me). */
    groupsOf: (username: string): Promise<string[]> => store.groups.groupsOf(username),
  };
}
