import type { PickedFile } from './drop';

/** What to do with a file whose name is taken in its folder. */
export type ConflictChoice = 'replace' | 'keep' | 'skip';

/** One picked file whose name a file in its target folder already has. */
export type TakenName = { readonly picked: PickedFile; readonly name: string; readonly dir: readonly string[] };

const dirKey = (dir: readonly string[]) => dir.join('/');

/** The distinct sub-folders (relative to the target) the batch writes into, shallowest first. */
export function foldersOf(files: readonly PickedFile[]): string[][] {
  const seen = new Map<string, string[]>();
  for (const f of files) if (!seen.has(dirKey(f.dir))) seen.set(dirKey(f.dir), f.dir);
  return [...seen.values()].sort((a, b) => a.length - b.length);
}

/**
 * The batch's files that land on a taken name. Only a file counts: a folder
 * of that name is never replaced by a file, so the server's collision suffix
 * is the one answer there.
 */
export function takenNames(files: readonly PickedFile[], existingFiles: ReadonlyMap<string, ReadonlySet<string>>): TakenName[] {
  return files.filter((f) => existingFiles.get(dirKey(f.dir))?.has(f.file.name)).map((f) => ({ picked: f, name: f.file.name, dir: f.dir }));
}

/** Index the existing file names by the sub-folder key `takenNames` looks them up under. */
export const existingKey = dirKey;

/**
 * The answers given one at a time, each optionally for all the taken names
 * still unanswered, spread over the whole list: `answers[i]` is the answer
 * asked about `taken[i]`; the last one given with `all` covers the rest.
 */
export function spreadAnswers(count: number, answers: readonly { choice: ConflictChoice; all: boolean }[]): ConflictChoice[] | undefined {
  const out: ConflictChoice[] = [];
  for (const a of answers) {
    if (out.length >= count) break;
    if (a.all) while (out.length < count) out.push(a.choice);
    else out.push(a.choice);
  }
  return out.length === count ? out : undefined;
}
