import { userInfo } from 'node:os';
import { systemClock } from '../lib/clock.js';
import { createAuditService } from '../services/audit.js';
import type { MetadataStore } from '../store/metadata-store.js';

/** Which operating-system account ran the command (unknown in some containers). */
function osUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

/**
 * Records an admin action done with the CLI in the audit log, like the same action through the
 * API: no account acted (the CLI needs no sign-in), so `actor` is null and the details say
 * `via: cli` and which system user ran it. A failure to record is reported, not fatal: the
 * change is made already.
 */
export function cliAudit(store: MetadataStore): (type: string, target: string, detail?: Record<string, unknown>) => Promise<void> {
  const audit = createAuditService({
    repo: store.audit,
    clock: systemClock,
    retentionDays: 0,
    onError: (err) => void process.stderr.write(`file-cloud: recording the audit event failed: ${(err as Error).message}\n`),
  });
  return (type, target, detail = {}) => audit.record({ type, target, outcome: 'success', userAgent: 'file-cloud CLI', detail: { ...detail, via: 'cli', os_user: osUser() } });
}
