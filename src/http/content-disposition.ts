// C0 controls, DEL and C1 controls: never part of a name we put in a header.
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// encodeURIComponent throws on a lone surrogate, which a JS string may hold.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// Printable ASCII minus `"` and `\` (quoted-string escapes that browsers handle
// inconsistently) and `%` (some browsers percent-decode the plain filename).
const PLAIN = /^[\u0020\u0021\u0023-\u0024\u0026-\u005b\u005d-\u007e]*$/;

/**
 * The Content-Disposition value for sending `filename` (RFC 6266). It always
 * carries an ASCII `filename="…"` fallback for old clients, with non-ASCII
 * characters and `"`, `\`, `%` replaced by `_`; when the name is not plain
 * ASCII it adds `filename*=UTF-8''…` (RFC 8187/5987), which current browsers
 * prefer and which keeps the exact name. Control characters are dropped from
 * both, so the value can never contain CR or LF.
 */
export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const name = filename.replace(CONTROL, '').replace(LONE_SURROGATE, '\uFFFD');
  if (name === '') return type;
  if (PLAIN.test(name)) return `${type}; filename="${name}"`;
  const fallback = Array.from(name, (c) => (PLAIN.test(c) ? c : '_')).join('');
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(name)}`;
}

/** Percent-encodes everything outside RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  // encodeURIComponent leaves ' ( ) * unescaped, but they are not attr-chars.
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
