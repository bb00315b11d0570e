import type { Config } from '../config/options.js';
import { dataPaths } from '../main.js';
import { openPostgresStore } from '../store/postgres.js';
import { openSqliteStore } from '../store/sqlite.js';
import { systemClock } from '../lib/clock.js';
import { createAuditService } from '../services/audit.js';

export const AUDIT_VERIFY_SUMMARY =
  'Walks the audit log\'s hash chain from its anchor to its head and reports the first entry that was altered or removed (exit 1). Safe beside a running server.';

/** `file-cloud audit verify`: 0 when the chain is whole, 1 at the first altered or missing entry. */
export async function runAuditVerify(config: Config): Promise<number> {
  // Only the metadata store: the chain lives there, and storage need not be reachable to check it.
  const store = config.database.kind === 'postgres' ? await openPostgresStore(config.database.url, { timeoutMs: config.serviceTimeout * 1000 }) : await openSqliteStore(dataPaths(config.dataDir).db);
  try {
    const audit = createAuditService({ repo: store.audit, clock: systemClock, retentionDays: 0, onError: () => undefined });
    const r = await audit.verify();
    if (r.ok) {
      process.stdout.write(`audit log intact: ${r.checked} entr${r.checked === 1 ? 'y' : 'ies'} checked, head ${r.head}\n`);
      return 0;
    }
    process.stderr.write(`file-cloud: audit log broken: ${r.message} (${r.checked} entries before it are intact)\n`);
    return 1;
  } finally {
    await store.close();
  }
}
