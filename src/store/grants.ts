/**
 * An item shared with another account or a group. `path` is the item in its owner's tree ('a/b.txt');
 * `toName` is the recipient's username or group name at the time it was read.
 */
export type Grant = {
  readonly id: string;
  readonly ownerId: string;
  readonly owner: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly toKind: 'user' | 'group';
  readonly toId: string;
  readonly toName: string;
  readonly permission: 'read' | 'write';
  readonly createdAt: number;
};

/** Grants (migration 0016_grants). */
export interface GrantRepo {
  /** False when the same item is granted to the same recipient already. */
  create(g: Omit<Grant, 'toName'>): Promise<boolean>;
  get(id: string): Promise<Grant | undefined>;
  /** The grants an owner gave, newest first. */
  listByOwner(ownerId: string): Promise<Grant[]>;
  /** The grants that reach a user, directly or through a group they are in, newest first; `owner` narrows them to one owner's tree. */
  listForRecipient(userId: string, owner?: string): Promise<Grant[]>;
  /** The names of the users any grant of these owners reaches, directly or through a group (each once). */
  recipientsOf(owners: readonly string[]): Promise<string[]>;
  setPermission(id: string, permission: Grant['permission']): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** Ends the grants of `path` and of everything below it in `owner`'s tree (the item was deleted). */
  deleteWithin(owner: string, path: string): Promise<void>;
  /** Carries the grants of `from` and below to `to` in the same owner's tree (the item was renamed or moved). */
  moveWithin(owner: string, from: string, to: string): Promise<void>;
}
