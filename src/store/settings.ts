/** Server-wide values shared by every node (the path-token key when the database is PostgreSQL). */
export interface SettingsRepo {
  /** The value of `name`, set to `make()` first if it has none; concurrent callers all get the first value stored. */
  getOrCreate(name: string, make: () => string): Promise<string>;
  /** The value of `name`, undefined when it has none. */
  get(name: string): Promise<string | undefined>;
  /** Sets `name` to `value`, whether it had one or not. */
  put(name: string, value: string): Promise<void>;
}
