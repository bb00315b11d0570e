export type JournalRecord = { readonly id: string; readonly kind: string; readonly data: string; readonly createdAt: number; readonly updatedAt: number };

/** Intent records of multi-step work, written before the first step and deleted after the last. */
export interface JournalRepo {
  put(r: { id: string; kind: string; data: string; now: number }): Promise<void>;
  /** Replaces the data (the next step) and the update time; false when the record is gone. */
  update(id: string, data: string, now: number): Promise<boolean>;
  get(id: string): Promise<JournalRecord | undefined>;
  /** Records of a kind last updated before `updatedBefore`, oldest first. */
  list(kind: string, updatedBefore: number, limit: number): Promise<JournalRecord[]>;
  delete(id: string): Promise<void>;
}
