import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import { keyChild, type StorageKey } from '../domain/storage-path.js';
import type { UploadPart } from './files.js';
import type { PrincipalOperations } from './operations.js';
import { sentence } from '../lib/i18n/sentences.js';

/** A change a form asks for in a folder (the /basic/ pages): the fields as sent, checked here. */
export type FolderAction =
  | { readonly action: 'upload'; readonly parts: AsyncIterable<UploadPart> }
  | { readonly action: 'mkdir'; readonly name: string | undefined }
  | { readonly action: 'rename'; readonly name: string | undefined; readonly newName: string | undefined }
  | { readonly action: 'delete'; readonly name: string | undefined };

/** A direct child of a folder, by a name from a form or query: a missing or invalid name is a clear 400. */
export function childKey(dir: StorageKey, name: unknown): StorageKey {
  if (typeof name !== 'string' || name === '') throw new AppError('invalid_name', sentence('apiDetail.nameRequired'));
  const problem = nameProblem(name);
  if (problem) throw new AppError('invalid_name', sentence('apiDetail.nameNotAllowed', { problem }));
  return keyChild(dir, name);
}

/** What a folder action did, for the page to say in the reader's language. */
export type FolderActionDone =
  | { readonly done: 'uploaded'; readonly names: readonly string[] }
  | { readonly done: 'created'; readonly name: string }
  | { readonly done: 'unchanged' }
  | { readonly done: 'renamed'; readonly from: string; readonly to: string }
  | { readonly done: 'deleted'; readonly name: string };

/**
 * The changes the no-JavaScript pages make in a folder, through the same operation layer (access,
 * limits, quota, collision rule) as /storage/; each answers with what it did.
 */
export async function applyFolderAction(files: PrincipalOperations, dir: StorageKey, change: FolderAction): Promise<FolderActionDone> {
  const folder = await files.stat(dir);
  if (folder.isFile) throw new AppError('not_a_directory', 'This address is a file, not a folder.');
  switch (change.action) {
    case 'upload': {
      // Same service, limits and collision rule as a multipart PUT: a taken name gets "name (1).ext".
      return { done: 'uploaded', names: (await files.writeParts(dir, change.parts, { overwrite: false })).map((e) => e.name) };
    }
    case 'mkdir': {
      const name = change.name?.trim() ?? '';
      await files.createFolder(childKey(dir, name));
      return { done: 'created', name };
    }
    case 'rename': {
      const from = childKey(dir, change.name);
      const to = childKey(dir, change.newName?.trim());
      if (to.segments.at(-1) === from.segments.at(-1)) return { done: 'unchanged' };
      await files.statOrThrow(from);
      await files.move(from, to, false);
      return { done: 'renamed', from: change.name ?? '', to: change.newName?.trim() ?? '' };
    }
    case 'delete':
      await files.delete(childKey(dir, change.name));
      return { done: 'deleted', name: change.name ?? '' };
  }
}
