/** One entry of the audit log (0020_audit, src/services/audit.ts). Times are epoch milliseconds. */
export type AuditRow = {
  readonly seq: number;
  readonly at: number;
  readonly type: string;
  readonly actor: string | null;
  readonly address: string | null;
  readonly userAgent: string | null;
  readonly target: string | null;
  readonly outcome: string;
  /** JSON object text, or null. */
  readonly detail: string | null;
  readonly prevHash: string;
  readonly hash: string;
};

export type AuditDraft = Omit<AuditRow, 'seq' | 'prevHash' | 'hash'>;

export type AuditHead = { readonly seq: number; readonly hash: string; readonly anchorSeq: number; readonly anchorHash: string };

export type AuditFilter = { readonly since?: number; readonly until?: number; readonly actor?: string; readonly type?: string; readonly beforeSeq?: number; readonly limit: number };

export interface AuditRepo {
  /**
   * Appends one entry as the chain's next: under the head row's lock (every node's appends queue
   * there), seq = head + 1 and prevHash = the head's hash; `hashOf` seals the entry.
   */
  append(draft: AuditDraft, hashOf: (entry: Omit<AuditRow, 'hash'>) => string): Promise<AuditRow>;
  /** Newest first, matching the filter, below `beforeSeq` when given. */
  list(filter: AuditFilter): Promise<AuditRow[]>;
  /** Oldest first: the entries after `afterSeq` (verification, webhook delivery). */
  after(afterSeq: number, limit: number): Promise<AuditRow[]>;
  head(): Promise<AuditHead>;
  /**
   * Removes the oldest entries recorded before `before`, moving the anchor to the last one removed
   * (its seq and hash), so what remains still verifies. Returns how many went.
   */
  purgeBefore(before: number): Promise<number>;
}
