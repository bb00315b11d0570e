export type FileKind = 'folder' | 'image' | 'video' | 'audio' | 'pdf' | 'text' | 'archive' | 'other';

const KINDS: Record<string, FileKind> = {};
const add = (kind: FileKind, exts: string) => exts.split(' ').forEach((e) => (KINDS[e] = kind));
add('image', 'png jpg jpeg gif webp avif bmp ico svg');
add('video', 'mp4 m4v webm ogv mov');
add('audio', 'mp3 m4a aac wav oga ogg opus flac');
add('pdf', 'pdf');
add(
  'text',
  'txt text md markdown log csv tsv json jsonc yaml yml toml ini conf cfg env xml html htm css scss less js mjs cjs jsx ts tsx mts cts ' +
    'py rb go rs java kt kts c h cc cpp hpp cs swift php pl sh bash zsh fish ps1 bat sql graphql proto lua r dart scala clj ex exs erl ' +
    'hs ml vue svelte gradle properties gitignore dockerfile makefile mk tex rst adoc srt vtt diff patch lock',
);
add('archive', 'zip tar gz tgz bz2 xz 7z rar zst');

const TEXT_NAMES = new Set(['readme', 'license', 'makefile', 'dockerfile', 'changelog', 'authors', 'copying', '.gitignore', '.env', '.editorconfig']);

export function extensionOf(name: string): string {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
}

export function kindOf(name: string, isFile: boolean): FileKind {
  if (!isFile) return 'folder';
  const kind = KINDS[extensionOf(name)];
  if (kind) return kind;
  return TEXT_NAMES.has(name.toLowerCase()) ? 'text' : 'other';
}

/** Kinds the preview can show inline. */
export const previewable = (kind: FileKind): boolean => kind === 'image' || kind === 'video' || kind === 'audio' || kind === 'pdf' || kind === 'text';

/** Where the stem of a name ends, for selecting it in a rename field ("report.final.pdf" → before ".pdf"). */
export function stemLength(name: string, isFile: boolean): number {
  const i = name.lastIndexOf('.');
  return isFile && i > 0 ? i : name.length;
}

/** The text editor opens files up to this size: beyond it a browser textarea gets slow, and such files are rarely edited by hand. */
export const EDIT_MAX_BYTES = 1024 * 1024;

/** Whether the text editor offers to open this entry: a text file (by extension or well-known name) of at most EDIT_MAX_BYTES. */
export const isEditable = (entry: { name: string; is_file: boolean; size: number }): boolean => entry.is_file && kindOf(entry.name, true) === 'text' && entry.size <= EDIT_MAX_BYTES;
