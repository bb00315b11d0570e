import type { Config } from '../config/options.js';
import { openDataDir } from '../main.js';
import { createSearchService } from '../services/search.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/types.js';

/**
 * One step of `file-cloud index`: recomputes something kept from storage
 * events (the search index, usage figures) from storage itself, for files
 * other tools put there or removed. Returns one line for the operator.
 */
export type ReindexStep = {
  readonly name: string;
  run(deps: { store: MetadataStore; backend: StorageBackend }): Promise<string>;
};

export const REINDEX_STEPS: readonly ReindexStep[] = [
  {
    name: 'search',
    async run({ store, backend }) {
      const search = createSearchService({ store, backend });
      try {
        const r = await search.rescanAll();
        return `Search index: ${r.entries} entries of ${r.users} user${r.users === 1 ? '' : 's'} rescanned, ${r.removed} stale removed.`;
      } finally {
        search.close();
      }
    },
  },
];

/** `file-cloud index`: every step in order, against the data directory; safe beside a running server. */
export async function runIndexCommand(config: Config, steps: readonly ReindexStep[] = REINDEX_STEPS): Promise<number> {
  const { store, backend } = await openDataDir(config, false);
  try {
    for (const step of steps) process.stderr.write(`${await step.run({ store, backend })}\n`);
  } finally {
    await backend.close();
    await store.close();
  }
  return 0;
}
