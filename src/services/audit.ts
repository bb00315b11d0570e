import { createWriteStream, type WriteStream } from 'node:fs';
import { sha256Hex } from '../lib/crypto.js';
import type { Clock } from '../lib/clock.js';
import type { AuditRepo, AuditRow } from '../store/audit.js';

/** How an audited action ended: done, refused for lack of rights (401/403), or failed otherwise. */
export type AuditOutcome = 'success' | 'denied' | 'failure';

/** One security event, as the code that saw it describes it. */
export type AuditEvent = {
  readonly type: string;
  readonly actor?: string | null;
  readonly address?: string | null;
  readonly userAgent?: string | null;
  readonly target?: string | null;
  readonly outcome: AuditOutcome;
  /** A few facts about it (never a secret); the failure's reason class goes here as `reason`. */
  readonly detail?: Readonly<Record<string, unknown>>;
};

export type VerifyResult =
  | { readonly ok: true; readonly checked: number; readonly head: number }
  | { readonly ok: false; readonly checked: number; readonly seq: number; readonly problem: 'altered' | 'missing'; readonly message: string };

export type AuditService = {
  /** Appends the event to the chain (and the --audit-log export). Never throws: a failure is reported to onError. */
  record(event: AuditEvent): Promise<void>;
  list(filter: { since?: number; until?: number; user?: string; type?: string; limit: number; cursor?: number }): Promise<{ events: AuditRow[]; cursor: string | null }>;
  verify(): Promise<VerifyResult>;
  /** Drops entries older than the retention, keeping the chain verifiable from its anchor. */
  purge(): Promise<number>;
  close(): Promise<void>;
};

const USER_AGENT_MAX = 512;

/**
 * What an entry's hash seals: every field, and the previous entry's hash, in a fixed order. A
 * JSON array so no two different entries can serialize alike.
 */
export function auditHash(e: Omit<AuditRow, 'hash'>): string {
  return sha256Hex(JSON.stringify([e.seq, e.at, e.type, e.actor, e.address, e.userAgent, e.target, e.outcome, e.detail, e.prevHash]));
}

/**
 * The audit log (docs/operations.md "Audit log"): security events in one hash chain in the
 * metadata store, shared by every node, optionally also written as JSON lines to a file or stdout.
 */
export function createAuditService(deps: {
  repo: AuditRepo;
  clock: Clock;
  /** Days an entry is kept; 0 keeps all. */
  retentionDays: number;
  /** --audit-log: a file path, '-' for stdout, '' for none. */
  exportTo?: string;
  /**
   * One line of that export for an entry (docs/operations.md "Audit log": the API's view of it, as
   * JSON). Given by the composition root, so this service never spells the wire's names.
   */
  exportLine?: (row: AuditRow) => string;
  /** Told of every entry appended (webhook delivery wakes up). */
  onAppend?: (row: AuditRow) => void;
  onError: (err: unknown) => void;
}): AuditService {
  const { repo, clock } = deps;
  let sink: WriteStream | NodeJS.WriteStream | undefined;
  if (deps.exportTo && !deps.exportLine) throw new Error('An audit export needs its line format (exportLine).');
  if (deps.exportTo === '-') sink = process.stdout;
  else if (deps.exportTo) {
    // O_APPEND: the workers of a node share the file, and each line lands whole.
    sink = createWriteStream(deps.exportTo, { flags: 'a', mode: 0o600 });
    sink.on('error', deps.onError);
  }
  return {
    async record(event) {
      try {
        const row = await repo.append(
          {
            at: clock.now(),
            type: event.type,
            actor: event.actor ?? null,
            address: event.address ?? null,
            userAgent: event.userAgent ? event.userAgent.slice(0, USER_AGENT_MAX) : null,
            target: event.target ?? null,
            outcome: event.outcome,
            detail: event.detail && Object.keys(event.detail).length > 0 ? JSON.stringify(event.detail) : null,
          },
          auditHash,
        );
        if (sink) sink.write(`${deps.exportLine!(row)}\n`);
        deps.onAppend?.(row);
      } catch (err) {
        deps.onError(err);
      }
    },

    async list(f) {
      const rows = await repo.list({ since: f.since, until: f.until, actor: f.user, type: f.type, beforeSeq: f.cursor, limit: f.limit + 1 });
      const more = rows.length > f.limit;
      const page = rows.slice(0, f.limit);
      return { events: page, cursor: more ? String(page[page.length - 1]!.seq) : null };
    },

    async verify() {
      const head = await repo.head();
      let expectSeq = head.anchorSeq + 1;
      let expectPrev = head.anchorHash;
      let checked = 0;
      for (;;) {
        const rows = await repo.after(expectSeq - 1, 1000);
        if (rows.length === 0) break;
        for (const r of rows) {
          if (r.seq !== expectSeq) return { ok: false, checked, seq: expectSeq, problem: 'missing', message: `entry ${expectSeq} is missing (the next one is ${r.seq})` };
          if (r.prevHash !== expectPrev) {
            // The previous entry was rewritten together with its own hash: it no longer is what this one sealed.
            return { ok: false, checked, seq: r.seq - 1, problem: 'altered', message: `entry ${r.seq - 1} was altered (entry ${r.seq} sealed another hash)` };
          }
          if (auditHash(r) !== r.hash) return { ok: false, checked, seq: r.seq, problem: 'altered', message: `entry ${r.seq} was altered (its hash does not match its content)` };
          expectSeq = r.seq + 1;
          expectPrev = r.hash;
          checked++;
        }
      }
      if (expectSeq - 1 < head.seq) return { ok: false, checked, seq: expectSeq, problem: 'missing', message: `entries ${expectSeq} to ${head.seq} are missing (the chain's head is ${head.seq})` };
      if (expectSeq - 1 === head.seq && head.seq > head.anchorSeq && expectPrev !== head.hash) return { ok: false, checked, seq: head.seq, problem: 'altered', message: `entry ${head.seq} was altered (the head sealed another hash)` };
      return { ok: true, checked, head: head.seq };
    },

    async purge() {
      if (deps.retentionDays <= 0) return 0;
      return repo.purgeBefore(clock.now() - deps.retentionDays * 86_400_000);
    },

    async close() {
      if (sink && sink !== process.stdout) await new Promise<void>((resolve) => (sink as WriteStream).end(resolve));
    },
  };
}
