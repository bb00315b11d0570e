/**
 * Files dropped or picked, each with the folder path (relative to the upload
 * target) it belongs in, so a dropped folder keeps its structure.
 */
export type PickedFile = { file: File; dir: string[] };
export type Picked = { files: PickedFile[]; emptyDirs: string[][] };

// The File and Directory Entries API, typed narrowly for what we use.
type FsEntry = { isFile: boolean; isDirectory: boolean; name: string };
type FsFileEntry = FsEntry & { file(ok: (f: File) => void, fail: (e: unknown) => void): void };
type FsDirEntry = FsEntry & { createReader(): { readEntries(ok: (e: FsEntry[]) => void, fail: (e: unknown) => void): void } };

/** Files from an <input type=file> (with webkitdirectory, webkitRelativePath carries the folders). */
export function fromInput(list: FileList): Picked {
  const files: PickedFile[] = [];
  for (const file of Array.from(list)) {
    const rel = file.webkitRelativePath || '';
    const parts = rel.split('/').filter((p) => p !== '');
    files.push({ file, dir: parts.length > 1 ? parts.slice(0, -1) : [] });
  }
  return { files, emptyDirs: [] };
}

/** Files and folders from a drop, walking dropped folders (readEntries returns batches: read until empty). */
export async function fromDrop(dt: DataTransfer): Promise<Picked> {
  const entries: FsEntry[] = [];
  const plain: File[] = [];
  for (const item of Array.from(dt.items)) {
    if (item.kind !== 'file') continue;
    const entry = (item as DataTransferItem & { webkitGetAsEntry?: () => FsEntry | null }).webkitGetAsEntry?.();
    if (entry) entries.push(entry);
    else {
      const f = item.getAsFile();
      if (f) plain.push(f);
    }
  }
  const out: Picked = { files: plain.map((file) => ({ file, dir: [] })), emptyDirs: [] };
  if (entries.length === 0 && plain.length === 0) out.files = Array.from(dt.files).map((file) => ({ file, dir: [] }));
  for (const e of entries) await walk(e, [], out);
  return out;
}

async function walk(entry: FsEntry, dir: string[], out: Picked): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((ok, fail) => (entry as FsFileEntry).file(ok, fail));
    out.files.push({ file, dir });
    return;
  }
  if (!entry.isDirectory) return;
  const here = [...dir, entry.name];
  const reader = (entry as FsDirEntry).createReader();
  let count = 0;
  for (;;) {
    const batch = await new Promise<FsEntry[]>((ok, fail) => reader.readEntries(ok, fail));
    if (batch.length === 0) break;
    count += batch.length;
    for (const child of batch) await walk(child, here, out);
  }
  if (count === 0) out.emptyDirs.push(here);
}

/** True when a drag carries files (not text or a link from the page). */
/** The drag data type of the app's own rows being dragged to move them (see useMoveDrag). */
export const ENTRY_DRAG_TYPE = 'application/x-file-cloud-entries';

/** Files dragged in from outside (rows of the app dragged to move them are not: Chromium may add "Files" for their images). */
export const dragHasFiles = (dt: DataTransfer | null): boolean => !!dt && Array.from(dt.types).includes('Files') && !Array.from(dt.types).includes(ENTRY_DRAG_TYPE);
