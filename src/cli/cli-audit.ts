import { userInfo } from 'node:os';
import type { AuditService } from '../services/audit.js';

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
 * change is made already (src/cli/command-services.ts).
 */
export function cliAudit(audit: AuditService): (type: string, target: string, detail?: Record<string, unknown>) => Promise<void> {
  return (type, target, detail = {}) => audit.record({ type, target, outcome: 'success', userAgent: 'file-cloud CLI', detail: { ...detail, via: 'cli', os_user: osUser() } });
}
