/** What the module-log hook (module-log-hook.ts) recorded: which packages a process loaded. */
import { readFile } from 'node:fs/promises';

/** The `node --import` arguments that record into `file` (with FC_TEST_MODULE_LOG=file in the environment). */
export const MODULE_LOG_NODE_ARGS: readonly string[] = ['--import', new URL('./module-log-hook.js', import.meta.url).href];

/** The npm packages (`name` or `@scope/name`) of the modules recorded in `file` so far. */
export async function packagesLoaded(file: string): Promise<Set<string>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const out = new Set<string>();
  for (const url of text.split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*\/node_modules\/)/.exec(url);
    if (m) out.add(m[1] as string);
  }
  return out;
}
