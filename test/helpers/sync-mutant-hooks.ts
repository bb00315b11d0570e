// Loaded with `node --import` into a sync client a test starts (never into a shipped one): its
// planner module is served wrapped, so `plan` is the mutant FILE_CLOUD_SYNC_TEST_MUTANT names
// (test/helpers/sync-mutants.ts), and everything else of the client is the real code.
import { registerHooks } from 'node:module';
import { isMutant } from './sync-mutants.js';

const mutant = process.env.FILE_CLOUD_SYNC_TEST_MUTANT;
if (!isMutant(mutant)) throw new Error(`FILE_CLOUD_SYNC_TEST_MUTANT: no such mutant: ${mutant}`);
const MUTANTS_URL = new URL('./sync-mutants.js', import.meta.url).href;
// The client's planner as the package builds it and as the server's `file-cloud sync` loads it.
const PLANNER = /\/packages\/sync\/(dist|src)\/planner\.js$/;

registerHooks({
  load(url, context, nextLoad) {
    if (!PLANNER.test(url)) return nextLoad(url, context);
    const original = `${url}?original`;
    const source = [
      `import { plan as correct } from ${JSON.stringify(original)};`,
      `import { mutated } from ${JSON.stringify(MUTANTS_URL)};`,
      `export * from ${JSON.stringify(original)};`,
      `export const plan = mutated(correct, ${JSON.stringify(mutant)});`,
    ].join('\n');
    return { format: 'module', source, shortCircuit: true };
  },
});
