/** Small fetch helpers for tests against a real listening server. */
export type Tokens = { access_token: string; refresh_token: string; valid_for_seconds: number };

export async function login(url: string, username: string, password: string, headers: Record<string, string> = {}): Promise<Tokens> {
  const res = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }) });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Tokens;
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Percent-encodes each segment of a storage path: `a b/c#d` → `a%20b/c%23d`. */
export const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/**
 * A JSON API client of one server for route tests: `req` sends a method with a bearer token and a JSON
 * body (a string as it is), `json` reads an answer that must have the given status (an empty body is
 * undefined), `errorOf` its contract error code. `base` is read at each call (the server starts in `before`).
 */
export function jsonApi(base: () => string) {
  const req = (method: string, path: string, token: string | undefined, body?: unknown) =>
    fetch(`${base()}${path}`, {
      method,
      headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const json = async <T>(res: Response, status: number): Promise<T> => {
    const text = await res.text();
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error;
  return { req, json, errorOf };
}

/**
 * Like jsonApi, for tests that act as several signed-in users: `req(who, ...)` sends with `tokens[who]`
 * (none for undefined), an object body as JSON and a string as it is, with extra headers.
 */
export function usersApi(base: () => string, tokens: Record<string, string>) {
  const req = (who: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base()}${path}`, {
      method,
      headers: { ...(who ? bearer(tokens[who] as string) : {}), ...(body === undefined || typeof body !== 'object' ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const { json } = jsonApi(base);
  return { req, json };
}
