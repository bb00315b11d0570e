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
