import type { Config } from '../config/options.js';
import { formatSize } from '../domain/sizes.js';
import type { Services } from '../app/services.js';
import { openCommandServices } from './command-services.js';

export const INDEX_SUMMARY =
  "Rescans every user's storage into what the server keeps about it (the search index and usage figures), for files other tools put there or removed. Safe beside a running server.";

/** What a reindex step gets: the data directory's services, the users, and a line printer. */
export type ReindexContext = { readonly services: Services; readonly users: readonly string[]; readonly say: (line: string) => void };

/**
 * The steps of `file-cloud index`, run in order for all users. Each feature
 * that keeps figures derived from storage events adds its own step here.
 */
export const REINDEX_STEPS: readonly { readonly name: string; run(ctx: ReindexContext): Promise<void> }[] = [
  {
    name: 'search',
    async run({ services, say }) {
      const r = await services.search.rescanAll();
      say(`Search index: ${r.entries} entries of ${r.users} user${r.users === 1 ? '' : 's'} rescanned, ${r.removed} stale removed.`);
      // Both stay in storage untouched; the listing shows the folder (CONTRACT "Backends and nodes").
      for (const path of r.hidden) say(`hidden: ${path} is a file that the folder of the same name hides; rename or remove one of them with an S3 tool to see both.`);
    },
  },
  {
    name: 'usage',
    async run({ services, users, say }) {
      for (const user of users) say(`usage: ${user} uses ${formatSize(await services.storageUsage.recount(user))}`);
    },
  },
];

/** `file-cloud index`: every step in order, against the data directory. */
export async function runIndex(config: Config): Promise<number> {
  const opened = await openCommandServices(config);
  try {
    const users = (await opened.store.users.list()).map((u) => u.username);
    const say = (line: string) => void process.stderr.write(`${line}\n`);
    for (const step of REINDEX_STEPS) await step.run({ services: opened.services, users, say });
  } finally {
    await opened.close();
  }
  return 0;
}
