import { writeSync } from 'node:fs';

/**
 * The points inside a step where a crash leaves the two sides half done: after a side changed and
 * before the journal says so. Tests stop the client at one of them to kill it there, at a stated
 * point rather than a lucky moment.
 */
export const STEPS = [
  /** The upload's first chunk is on its way; the rest is not read yet. */
  'upload:sending',
  /** The server stored the upload; the base does not know yet. */
  'upload:stored',
  /** The download is complete and fsynced in its temp file, not renamed yet. */
  'download:fetched',
  /** The download has its real name; the base does not know yet. */
  'download:placed',
  'delete-remote:deleted',
  'move-local:renamed',
  'move-remote:moved',
  'move-remote-folder:moved',
  /** The local version has its conflict name; the copy is not uploaded yet. */
  'conflict:renamed',
] as const;
export type Step = (typeof STEPS)[number];

/** `FILE_CLOUD_SYNC_STOP_AT=<step>`: the client stops itself there (SIGSTOP) after one line on stderr. */
export const STOP_AT_ENV = 'FILE_CLOUD_SYNC_STOP_AT';

let stopAt = process.env[STOP_AT_ENV];

export const stopsAt = (step: Step): boolean => stopAt === step;

/**
 * At the step named by FILE_CLOUD_SYNC_STOP_AT: writes `stopped at <step> <path>` to stderr
 * (synchronously, so the line is out before the stop) and stops the process, which then waits for
 * SIGCONT (it goes on, and stops no more) or SIGKILL (a crash at exactly that point). Elsewhere:
 * nothing.
 */
export function reached(step: Step, path: string): void {
  if (stopAt !== step) return;
  stopAt = undefined;
  writeSync(2, `file-cloud sync: stopped at ${step} ${path}\n`);
  process.kill(process.pid, 'SIGSTOP');
}
