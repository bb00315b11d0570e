import { sentence } from '../lib/i18n/sentences.js';
/**
 * Pure rules for names: usernames, file and folder names, and the
 * `name (1).ext` suffixes that keep a taken name from being overwritten.
 */

/** 1–64 characters of ASCII letters, digits, `.`, `_`, `-`; not starting with `.`. */
const USERNAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

export function isValidUsername(name: string): boolean {
  return USERNAME.test(name);
}

/** Longest name, in UTF-8 bytes, that common Linux file systems accept. */
export const MAX_NAME_BYTES = 255;

/**
 * Why a file or folder name is refused, or undefined when it is fine.
 * Any name a file system accepts works except `/`, NUL, `.`, `..`; backslash
 * is refused too, because Windows clients treat it as a separator.
 */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return sentence('apiPart.nameEmpty');
  if (name === '.' || name === '..') return sentence('apiPart.nameDots', { name });
  if (name.includes('/')) return sentence('apiPart.nameSlash');
  if (name.includes('\\')) return sentence('apiPart.nameBackslash');
  if (name.includes('\0')) return sentence('apiPart.nameNul');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return sentence('apiPart.nameTooLong', { max: MAX_NAME_BYTES });
  if (!isWellFormed(name)) return sentence('apiPart.nameUnicode');
  return undefined;
}

export function isValidName(name: string): boolean {
  return nameProblem(name) === undefined;
}

// String.prototype.isWellFormed exists from Node 20 on; lone surrogates cannot be stored as UTF-8.
function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The n-th alternative for a taken name, as desktop file managers make it:
 * `report.pdf` → `report (1).pdf`; only the last extension stays at the end
 * (`archive.tar.gz` → `archive.tar (1).gz`); dot-files keep their leading dot
 * (`.env` → `.env (1)`). n = 0 is the name itself. Never returns an invalid
 * name: when the suffix would make the name too long, the stem is shortened.
 */
export function collisionName(name: string, n: number): string {
  if (n === 0) return name;
  const dot = name.lastIndexOf('.');
  const suffix = ` (${n})`;
  // An extension too long to keep beside the suffix is treated as part of the stem.
  const hasExt = dot > 0 && dot < name.length - 1 && Buffer.byteLength(name.slice(dot) + suffix, 'utf8') < MAX_NAME_BYTES;
  const stem = hasExt ? name.slice(0, dot) : name;
  const ext = hasExt ? name.slice(dot) : '';
  let s = stem;
  while (s.length > 0 && Buffer.byteLength(s + suffix + ext, 'utf8') > MAX_NAME_BYTES) {
    s = Array.from(s).slice(0, -1).join('');
  }
  return s + suffix + ext;
}

/**
 * Orders strings by Unicode code point, as the contract's listings require.
 * JavaScript's `<` compares UTF-16 code units, which puts a name beyond the
 * Basic Multilingual Plane (a surrogate pair, 0xD800–0xDFFF) before names in
 * U+E000–U+FFFF; code points put it after. Only when both names hold such a
 * unit can the two orders differ, so plain `<` stays the fast path.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // At the first difference: a surrogate (part of a code point ≥ U+10000) is above every BMP unit ≥ U+E000.
    const hx = x >= 0xd800 && x <= 0xdfff;
    const hy = y >= 0xd800 && y <= 0xdfff;
    if (hx !== hy && (hx ? y : x) >= 0xe000) return hx ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
