// Kept compact on purpose: the common types a personal file server meets.
// Anything else is served as application/octet-stream, which is always safe.
// A Map, so that names like `x.constructor` or `x.__proto__` find nothing.
const TYPES: ReadonlyMap<string, string> = new Map(Object.entries({
  // text and code
  html: 'text/html', htm: 'text/html', css: 'text/css', js: 'text/javascript', mjs: 'text/javascript',
  cjs: 'text/javascript', json: 'application/json', map: 'application/json', webmanifest: 'application/manifest+json',
  txt: 'text/plain', text: 'text/plain', log: 'text/plain', md: 'text/markdown', markdown: 'text/markdown',
  csv: 'text/csv', tsv: 'text/tab-separated-values', xml: 'application/xml', yaml: 'application/yaml',
  yml: 'application/yaml', ics: 'text/calendar', vtt: 'text/vtt', srt: 'application/x-subrip', rtf: 'application/rtf',
  // images
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif',
  webp: 'image/webp', avif: 'image/avif', ico: 'image/vnd.microsoft.icon', bmp: 'image/bmp', tif: 'image/tiff',
  tiff: 'image/tiff', heic: 'image/heic', heif: 'image/heif',
  // documents
  pdf: 'application/pdf', epub: 'application/epub+zip',
  doc: 'application/msword', xls: 'application/vnd.ms-excel', ppt: 'application/vnd.ms-powerpoint',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  // archives
  zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip', tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed', rar: 'application/vnd.rar', bz2: 'application/x-bzip2',
  xz: 'application/x-xz', zst: 'application/zstd',
  // audio
  mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/ogg',
  wav: 'audio/wav', flac: 'audio/flac', weba: 'audio/webm', mid: 'audio/midi', midi: 'audio/midi',
  // video
  mp4: 'video/mp4', m4v: 'video/mp4', webm: 'video/webm', mkv: 'video/x-matroska', mov: 'video/quicktime',
  avi: 'video/x-msvideo', ogv: 'video/ogg', mpeg: 'video/mpeg', mpg: 'video/mpeg', '3gp': 'video/3gpp',
  // fonts and binaries
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf', wasm: 'application/wasm',
}));

const DEFAULT = 'application/octet-stream';

// Textual types whose bytes we assume are UTF-8, so browsers never guess a charset.
const TEXTUAL = /^(text\/|application\/(json|manifest\+json|xml|yaml)$|image\/svg\+xml$)/;

/**
 * The Content-Type for a file name, from its extension (case-insensitive),
 * with `; charset=utf-8` on textual types; `application/octet-stream` when
 * unknown. As with path.extname, a leading dot (`.bashrc`) is not an extension.
 */
export function contentTypeFor(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return DEFAULT;
  const type = TYPES.get(base.slice(dot + 1).toLowerCase());
  if (type === undefined) return DEFAULT;
  return TEXTUAL.test(type) ? `${type}; charset=utf-8` : type;
}
