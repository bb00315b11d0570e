/**
 * HTML built from template literals with escaping by default: every
 * interpolated value is escaped for text and attribute context (quoted
 * attributes only) unless it is itself an Html made by this module. So a
 * file name can never become markup, whatever it holds.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: `html\`<p>${name}</p>\`` escapes `name`; nested html`` results pass through. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Value) + (strings[i + 1] as string);
  return new Html(out);
}

/** A path of a URL from raw segments: each percent-encoded, so a name never changes the URL's structure. */
export function urlPath(base: string, segments: readonly string[], trailingSlash = false): string {
  const tail = segments.map((s) => encodeURIComponent(s)).join('/');
  return `${base}${tail === '' ? '' : `/${tail}`}${trailingSlash ? '/' : ''}`;
}
