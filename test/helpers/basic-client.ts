/**
 * A browser-like client for the basic HTML UI (/basic/): a real cookie jar
 * over fetch (Set-Cookie in, Cookie out, Max-Age=0 deletes), redirects not
 * followed so tests see every 303, and helpers for its forms.
 */
export type Cookie = { readonly value: string; readonly attributes: string };

export class BasicClient {
  readonly jar = new Map<string, Cookie>();

  /** `url` is the app's URL with its base path (TestApp.url). */
  constructor(readonly url: string) {}

  cookieHeader(): string {
    return [...this.jar].map(([k, c]) => `${k}=${c.value}`).join('; ');
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size && !headers.has('cookie')) headers.set('cookie', this.cookieHeader());
    const res = await fetch(`${this.url}${path}`, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const attributes = attrs.join(';').trim();
      if (/max-age=0\b/i.test(attributes)) this.jar.delete(name);
      else this.jar.set(name, { value: pair.slice(eq + 1).trim(), attributes });
    }
    return res;
  }

  /** GET a page, following redirects inside the basic UI (as a browser would). */
  async page(path: string): Promise<{ res: Response; html: string }> {
    let res = await this.fetch(path);
    for (let i = 0; i < 5 && res.status >= 300 && res.status < 400; i++) {
      await res.arrayBuffer();
      const location = res.headers.get('location') ?? '';
      res = await this.fetch(location.slice(new URL(this.url).pathname.replace(/\/$/, '').length));
    }
    return { res, html: await res.text() };
  }

  /** Signs in through the form; resolves the response of the POST. */
  login(username: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch('/basic/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams({ username, password }).toString() });
  }

  /** The CSRF token in a page's forms. */
  static csrfOf(html: string): string {
    const m = /name="csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error('no CSRF token on the page');
    return m[1] as string;
  }

  async csrf(path = '/basic/'): Promise<string> {
    return BasicClient.csrfOf((await this.page(path)).html);
  }

  /** POSTs an urlencoded form (the fields as given: pass `csrf` yourself). */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  }

  /** Uploads files through the folder page's form (multipart, `files` field, token in the action URL). */
  upload(folderPath: string, files: { name: string; content: string | Buffer }[], csrf: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
    const form = new FormData();
    for (const f of files) form.append('files', new Blob([f.content]), f.name);
    const query = csrf === undefined ? '?action=upload' : `?action=upload&csrf=${encodeURIComponent(csrf)}`;
    return this.fetch(`${folderPath}${query}`, { method: 'POST', body: form, headers });
  }
}

/** The names linked from a folder page's table, in order (folders with their trailing slash). */
export function listedNames(html: string): string[] {
  const names: string[] = [];
  for (const m of html.matchAll(/<td class="name"><a href="[^"]*">([^<]*)<\/a><\/td>/g)) names.push(unescape(m[1] as string));
  return names.filter((n) => !n.startsWith('../'));
}

/** The flash message of a page, if any. */
export function notice(html: string): string | undefined {
  const m = /<p class="msg" role="status">([^<]*)<\/p>/.exec(html);
  return m ? unescape(m[1] as string) : undefined;
}

export function unescape(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&amp;/g, '&');
}
