/** A group of accounts (admin-managed); `members` are usernames in code-point order. */
export type Group = { readonly name: string; readonly createdAt: number; readonly members: readonly string[] };

/** Groups and their members (migration 0015_groups). Names are unique; a removed user leaves every group. */
export interface GroupRepo {
  /** False when the name is taken. */
  create(id: string, name: string, now: number): Promise<boolean>;
  /** False when there is no such group. */
  delete(name: string): Promise<boolean>;
  get(name: string): Promise<Group | undefined>;
  /** The group's id (grants name groups by id, so a group's grants end with it). */
  idOf(name: string): Promise<string | undefined>;
  /** Every group, by name (code-point order). */
  list(): Promise<Group[]>;
  /**
   * Adds and removes members by username in one transaction; unknown users are refused before
   * anything changes. Undefined when there is no such group, else the usernames that were unknown.
   */
  changeMembers(name: string, add: readonly string[], remove: readonly string[]): Promise<{ unknown: string[] } | undefined>;
  /** The names of the groups `username` belongs to, in code-point order. */
  groupsOf(username: string): Promise<string[]>;
}
