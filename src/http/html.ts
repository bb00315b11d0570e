/**
 * Strictly escaped HTML for the server-rendered pages (the basic UI at
 * /basic/ and the share pages at /s/). Every value
 * put into an `html` template is escaped unless it is itself an `Html`
 * fragment made by this module, so user data (file names, messages) can
 * never become markup. Templates quote every attribute value, and the
 * escaping covers both quote kinds, so a value is safe in text and in
 * attributes alike.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ENTITIES[c] as string);
}

function render(v: HtmlValue): string {
  if (v instanceof Html) return v.value;
  if (v === null || v === undefined || v === false || v === true) return '';
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: `html\`<a href="${url}">${name}</a>\`` escapes url and name. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}
