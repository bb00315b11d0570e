/**
 * The three trees the planner compares. Paths are relative to the sync root, joined with `/`,
 * without a leading slash, in Unicode NFC. Files carry their content; folders (`Set`s of paths
 * beside the files) only exist, so that an empty one syncs too.
 */
export interface FileVersion {
  readonly sha256: string;
  readonly size: number;
  /** The server's stable id (survives moves); absent for a local file not yet uploaded. */
  readonly id?: string | undefined;
  /** The server's ETag for exactly these bytes, when known (If-Match needs no extra request then). */
  readonly etag?: string | undefined;
}

/** A local file as scanned: its content plus what tells a later scan it has not changed. */
export interface LocalFile extends FileVersion {
  readonly mtimeMs: number;
  readonly ino: number;
  /** Changes with every write and cannot be set back, unlike the mtime (`cp -p`, `touch -r`). */
  readonly ctimeMs?: number | undefined;
}

/** The last synced state of a path: the same bytes were on both sides when it was recorded. */
export interface BaseRecord extends FileVersion {
  readonly mtimeMs?: number | undefined;
  readonly ino?: number | undefined;
  readonly ctimeMs?: number | undefined;
}

/** What a stat tells of a file; equal stamps mean the bytes were not written in between. */
export type StatStamp = Pick<BaseRecord, 'size' | 'mtimeMs' | 'ino' | 'ctimeMs'>;

export const sameStat = (a: StatStamp, b: StatStamp): boolean => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs;

export type Tree<T extends FileVersion = FileVersion> = ReadonlyMap<string, T>;

export const sameContent = (a: FileVersion | undefined, b: FileVersion | undefined): boolean =>
  a !== undefined && b !== undefined && a.sha256 === b.sha256 && a.size === b.size;

const ASCII = /^[ -~]*$/;
/** `s` in Unicode NFC; a printable ASCII name is so already (ICU is not asked, once per file of a scan). */
export const toNfc = (s: string): string => (ASCII.test(s) ? s : s.normalize('NFC'));

export const parentOf = (path: string): string => {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
};

export const isUnder = (path: string, folder: string): boolean => folder === '' || path === folder || path.startsWith(`${folder}/`);

/** The folders that hold `path` (`a/b/c` → `a`, `a/b`). */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

/** Every folder at or below `from` takes the same place below `to` (and `to`'s own folders exist). */
export function renameDirs(dirs: Set<string>, from: string, to: string): void {
  const under = [...dirs].filter((d) => isUnder(d, from));
  for (const d of under) dirs.delete(d);
  for (const d of under) dirs.add(to + d.slice(from.length));
  for (const d of ancestorsOf(to)) dirs.add(d);
  dirs.add(to);
}
