import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { syncForever } from './continuous.js';
import { stateRoot } from './state-store.js';
import { syncStatus, syncVerify } from './status.js';
import { syncOnce, type SyncOptions } from './sync-run.js';

export const SYNC_USAGE = `usage:
  file-cloud-sync LOCAL_DIR /<owner>/<path> --server URL [--once] [--device NAME]
                  [--state-dir DIR] [--allow-deletes] [--key-file F]
  file-cloud-sync status LOCAL_DIR [--state-dir DIR]
  file-cloud-sync verify LOCAL_DIR [--state-dir DIR] [--key-file F]
The app password comes from --key-file F or FILE_CLOUD_SYNC_KEY.
Exit codes: 0 both sides match, 1 error, 2 usage error, 3 paused by a guard (nothing was destroyed).`;

class Usage extends Error {}

const OPTIONS = {
  server: { type: 'string' },
  once: { type: 'boolean' },
  device: { type: 'string' },
  'state-dir': { type: 'string' },
  'allow-deletes': { type: 'boolean' },
  'key-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function key(file: string | undefined, env: NodeJS.ProcessEnv): string {
  const k = file !== undefined ? readFileSync(file, 'utf8').trim() : env.FILE_CLOUD_SYNC_KEY;
  if (!k) throw new Usage('no app password: give --key-file F or set FILE_CLOUD_SYNC_KEY');
  return k;
}

/** FILE_CLOUD_SYNC_STAT_PASS_MS: continuous mode's time between full stat passes (tests shorten it). */
function statPassMs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.FILE_CLOUD_SYNC_STAT_PASS_MS;
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1000) throw new Usage(`FILE_CLOUD_SYNC_STAT_PASS_MS must be a whole number of milliseconds, at least 1000, not ${raw}`);
  return ms;
}

/**
 * `file-cloud-sync …` and `file-cloud sync …`: the arguments after the command name; resolves to
 * the exit code. Messages go to stderr, one line each.
 */
export async function runSyncCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const err = (line: string): void => void process.stderr.write(`file-cloud sync: ${line}\n`);
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    if (values.help) {
      process.stdout.write(`${SYNC_USAGE}\n`);
      return 0;
    }
    const root = stateRoot(values['state-dir'], env);
    const [first, second] = positionals;
    if ((first === 'status' || first === 'verify') && positionals.length === 2 && second !== undefined) {
      const r = first === 'status' ? await syncStatus(second, root) : await syncVerify(second, root, key(values['key-file'], env));
      (r.code === 0 ? process.stdout : process.stderr).write(`${r.text}\n`);
      return r.code;
    }
    if (positionals.length !== 2 || first === undefined || second === undefined) throw new Usage('expected LOCAL_DIR and /<owner>/<path>');
    if (!second.startsWith('/') || second.split('/').filter(Boolean).length === 0) throw new Usage(`the server folder must be /<owner>/<path>, not ${second}`);
    if (!values.server) throw new Usage('--server URL is required');
    try {
      new URL(values.server);
    } catch {
      throw new Usage(`--server is not a URL: ${values.server}`);
    }
    const opts: SyncOptions = {
      localDir: first,
      remoteRoot: second,
      server: values.server,
      key: key(values['key-file'], env),
      device: values.device ?? hostname(),
      stateRoot: root,
      allowDeletes: values['allow-deletes'] === true,
      log: (line) => process.stdout.write(`${line}\n`),
      statPassMs: statPassMs(env),
    };
    if (values.once) {
      const r = await syncOnce(opts);
      if (r.message) err(r.message);
      return r.code;
    }
    const stop = new AbortController();
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
    return await syncForever(opts, stop.signal);
  } catch (e) {
    if (e instanceof Usage || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`${(e as Error).message} (try --help)`);
      return 2;
    }
    err(e instanceof Error ? e.message : String(e));
    return 1;
  }
}
