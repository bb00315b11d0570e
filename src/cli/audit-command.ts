import type { Config } from '../config/options.js';
import { openCommandServices } from './command-services.js';

export const AUDIT_VERIFY_SUMMARY =
  'Walks the audit log\'s hash chain from its anchor to its head and reports the first entry that was altered or removed (exit 1). Safe beside a running server.';

/** `file-cloud audit verify`: 0 when the chain is whole, 1 at the first altered or missing entry. */
export async function runAuditVerify(config: Config): Promise<number> {
  // Only the metadata store: the chain lives there, and storage need not be reachable to check it.
  const { services, close } = await openCommandServices(config, { storage: false });
  try {
    const r = await services.audit.verify();
    if (r.ok) {
      process.stdout.write(`audit log intact: ${r.checked} entr${r.checked === 1 ? 'y' : 'ies'} checked, head ${r.head}\n`);
      return 0;
    }
    process.stderr.write(`file-cloud: audit log broken: ${r.message} (${r.checked} entries before it are intact)\n`);
    return 1;
  } finally {
    await close();
  }
}
