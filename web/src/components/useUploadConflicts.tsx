import { useCallback, useRef, useState } from 'react';
import { ApiError } from '../api/errors';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import type { Picked } from '../lib/drop';
import { existingKey, foldersOf, spreadAnswers, takenNames, type ConflictChoice, type TakenName } from '../lib/upload-conflicts';
import { UploadConflictDialog } from './UploadConflictDialog';
import { useAccount } from './useAccount';
import { t } from '../lib/i18n';

type Asking = { target: Segments; taken: TakenName[]; answers: { choice: ConflictChoice; all: boolean }[]; done: (choices: ConflictChoice[]) => void };

/**
 * Before a batch is queued: which of its files would land on a taken name,
 * and the user's answer for each (asked once, with "apply to all"). The
 * target folders are listed first; a folder that does not exist yet has no
 * taken names. `resolve` gives the batch to upload and the files to send
 * with overwrite; a name taken after the check gets the server's suffix.
 */
export function useUploadConflicts(storage: StorageApi) {
  const [asking, setAsking] = useState<Asking | null>(null);
  const versions = useAccount().me?.versions === true;
  const current = useRef(asking);
  current.current = asking;

  const resolve = useCallback(
    async (picked: Picked, target: Segments): Promise<{ picked: Picked; replace: ReadonlySet<File> }> => {
      const existing = new Map<string, Set<string>>();
      const missing: string[][] = [];
      for (const dir of foldersOf(picked.files)) {
        // Below a folder that is not there, nothing is.
        if (missing.some((m) => m.every((s, i) => dir[i] === s))) continue;
        const entries = await storage.list([...target, ...dir]).catch((e: unknown) => {
          if (e instanceof ApiError && e.status === 404) return undefined;
          throw e;
        });
        if (entries) existing.set(existingKey(dir), new Set(entries.filter((e) => e.is_file).map((e) => e.name)));
        else missing.push(dir);
      }
      const taken = takenNames(picked.files, existing);
      if (!taken.length) return { picked, replace: new Set() };
      const choices = await new Promise<ConflictChoice[]>((done) => setAsking({ target, taken, answers: [], done }));
      const skip = new Set<File>();
      const replace = new Set<File>();
      taken.forEach((t, i) => (choices[i] === 'skip' ? skip : choices[i] === 'replace' ? replace : undefined)?.add(t.picked.file));
      return { picked: { ...picked, files: picked.files.filter((f) => !skip.has(f.file)) }, replace };
    },
    [storage],
  );

  const answer = useCallback((choice: ConflictChoice, all: boolean) => {
    const a = current.current;
    if (!a) return;
    const answers = [...a.answers, { choice, all }];
    const choices = spreadAnswers(a.taken.length, answers);
    if (choices) {
      setAsking(null);
      a.done(choices);
    } else setAsking({ ...a, answers });
  }, []);

  const next = asking?.taken[asking.answers.length];
  const dialog =
    asking && next ? (
      <UploadConflictDialog
        taken={next}
        folderName={[...asking.target, ...next.dir].pop() ?? t('nav.myFiles')}
        others={asking.taken.length - asking.answers.length - 1}
        versions={versions}
        onAnswer={answer}
        onClose={() => answer('skip', true)}
      />
    ) : null;
  return { resolve, dialog };
}
