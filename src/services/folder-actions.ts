import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import type { Writer } from '../domain/principal.js';
import { keyChild, type StorageKey } from '../domain/storage-path.js';
import type { FilesService, UploadPart } from './files.js';

/** A change a form asks for in a folder (the /basic/ pages): the fields as sent, checked here. */
export type FolderAction =
  | { readonly action: 'upload'; readonly parts: AsyncIterable<UploadPart> }
  | { readonly action: 'mkdir'; readonly name: string | undefined }
  | { readonly action: 'rename'; readonly name: string | undefined; readonly newName: string | undefined }
  | { readonly action: 'delete'; readonly name: string | undefined };

/** A direct child of a folder, by a name from a form or query: a missing or invalid name is a clear 400. */
export function childKey(dir: StorageKey, name: unknown): StorageKey {
  if (typeof name !== 'string' || name === '') throw new AppError('invalid_name', 'A name is required.');
  const problem = nameProblem(name);
  if (problem) throw new AppError('invalid_name', `The name is not allowed: ${problem}.`);
  return keyChild(dir, name);
}

/**
 * The changes the no-JavaScript pages make in a folder, on the same files service (limits, quota,
 * collision rule) as /storage/; each answers with the sentence the page shows.
 */
export async function applyFolderAction(files: FilesService, dir: StorageKey, change: FolderAction, writer: Writer): Promise<string> {
  const folder = await files.stat(dir);
  if (folder.isFile) throw new AppError('not_a_directory', 'This address is a file, not a folder.');
  switch (change.action) {
    case 'upload': {
      // Same service, limits and collision rule as a multipart PUT: a taken name gets "name (1).ext".
      const written = (await files.writeParts(dir, change.parts, { overwrite: false, writer })).map((e) => e.name);
      return `Uploaded ${written.length === 1 ? '1 file' : `${written.length} files`}: ${written.join(', ')}.`;
    }
    case 'mkdir': {
      const name = change.name?.trim() ?? '';
      await files.createFolder(childKey(dir, name));
      return `Created folder ${name}.`;
    }
    case 'rename': {
      const from = childKey(dir, change.name);
      const to = childKey(dir, change.newName?.trim());
      if (to.segments.at(-1) === from.segments.at(-1)) return 'The name is unchanged.';
      await files.statOrThrow(from);
      await files.move(from, to, false);
      return `Renamed ${change.name} to ${change.newName?.trim()}.`;
    }
    case 'delete':
      await files.delete(childKey(dir, change.name));
      return `Deleted ${change.name}.`;
  }
}
