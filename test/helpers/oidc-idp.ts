/**
 * A real OpenID provider for the single sign-on tests: `oidc-provider` (the
 * certified Node implementation) on a free 127.0.0.1 port, with real RSA keys
 * made here, a login form of its own (/interaction/<uid>), and accounts the
 * test sets. It can be stopped and started again on the same port (down at
 * start, key rotation), and `tamper` re-signs the ID token of the next token
 * answers, with the provider's own key (or none), to play a broken or hostile
 * provider.
 */
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type IdpAccount = { readonly sub: string; readonly login: string; readonly password: string; readonly claims: Record<string, unknown> };

type SigningKey = { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> };

/** Rewrites the ID token of a token answer: its header and claims, and how it is signed. */
export type Tamper = (token: { header: Record<string, unknown>; claims: Record<string, unknown> }) => { header: Record<string, unknown>; claims: Record<string, unknown>; sign: 'current' | 'none' | 'foreign' };

type ProviderLike = {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(fn: (ctx: { path: string; body: unknown }, next: () => Promise<void>) => Promise<void>): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; params: { client_id: string; scope: string } }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: object, opts?: object): Promise<void>;
  Grant: new (o: { accountId: string; clientId: string }) => { addOIDCScope(s: string): void; save(): Promise<string> };
};

function newKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

const b64 = (v: object | Buffer) => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v))).toString('base64url');

function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: SigningKey | undefined): string {
  const input = `${b64(header)}.${b64(claims)}`;
  if (!key) return `${input}.`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key.privateKey).toString('base64url')}`;
}

export type TestIdp = {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly accounts: Map<string, IdpAccount>;
  /** Applied to the ID token of every token answer while set. */
  tamper: Tamper | undefined;
  /** A new signing key, published and used from the next start on (the old one stays published after it). */
  rotateKey(): void;
  readonly signingKid: string;
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** Starts the provider (unless `down`) on a free port and tells its issuer URL, client and accounts. */
export async function startIdp(opts: { down?: boolean } = {}): Promise<TestIdp> {
  const name = 'oidc-provider';
  const { default: Provider } = (await import(name)) as { default: new (issuer: string, config: object) => ProviderLike };
  // A free port, kept for every restart.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'file-cloud';
  const clientSecret = `secret-${randomUUID()}`;
  const accounts = new Map<string, IdpAccount>();
  let keys: SigningKey[] = [newKey()];
  const foreign = newKey();
  let server: Server | undefined;

  const idp: TestIdp = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamper: undefined,
    get signingKid() {
      return keys[0]!.kid;
    },
    rotateKey() {
      keys = [newKey(), ...keys];
    },
    async start() {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            // native: RFC 8252 loopback redirects match on any port, so the servers of a test may pick theirs.
            application_type: 'native',
            redirect_uris: ['http://127.0.0.1/auth/oidc/callback', 'http://127.0.0.1/files/auth/oidc/callback'],
            post_logout_redirect_uris: ['http://127.0.0.1/login', 'http://127.0.0.1/files/login'],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        jwks: { keys: keys.map((k) => k.jwk) },
        cookies: { keys: ['test-cookie-key-for-the-test-idp'] },
        claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email', 'email_verified'], groups: ['groups'] },
        features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        async findAccount(_ctx: unknown, id: string) {
          const account = [...accounts.values()].find((a) => a.sub === id);
          if (!account) return undefined;
          return { accountId: id, claims: async () => ({ sub: id, ...account.claims }) };
        },
      });
      provider.use(async (ctx, next) => {
        await next();
        const body = ctx.body as { id_token?: string } | undefined;
        if (ctx.path !== '/token' || !idp.tamper || typeof body?.id_token !== 'string') return;
        const [h, c] = body.id_token.split('.');
        const out = idp.tamper({ header: JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>, claims: JSON.parse(Buffer.from(c!, 'base64url').toString()) as Record<string, unknown> });
        const key = out.sign === 'none' ? undefined : out.sign === 'foreign' ? foreign : keys.find((k) => k.kid === out.header.kid) ?? keys[0];
        body.id_token = signJwt(out.sign === 'none' ? { ...out.header, alg: 'none' } : out.header, out.claims, key);
      });
      const handler = provider.callback();
      server = createServer((req, res) => {
        const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
        if (!m) return handler(req, res);
        void interaction(provider, req, res).catch((e: unknown) => {
          res.statusCode = 500;
          res.end(String(e));
        });
      });
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    },
  };

  /** The provider's own sign-in form: login and password of an account set by the test. */
  async function interaction(provider: ProviderLike, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const form = (error = '') => {
      res.writeHead(error ? 401 : 200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Test provider</title><h1>Test provider sign-in</h1>${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/interaction/${details.uid}"><label>Login <input name="login"></label><label>Secret <input name="password" type="password"></label><button type="submit">Continue</button></form>`);
    };
    if (req.method !== 'POST') return form();
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const fields = new URLSearchParams(raw);
    const account = accounts.get(fields.get('login') ?? '');
    if (!account || account.password !== fields.get('password')) return form('Wrong login or secret.');
    const grant = new provider.Grant({ accountId: account.sub, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  if (!opts.down) await idp.start();
  return idp;
}

/** A cookie jar per host for following the provider's redirects with fetch. */
function jar() {
  const cookies = new Map<string, Map<string, string>>();
  return {
    header(url: string): Record<string, string> {
      const c = cookies.get(new URL(url).host);
      return c && c.size ? { cookie: [...c].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
    },
    take(url: string, res: Response): void {
      const host = new URL(url).host;
      const c = cookies.get(host) ?? new Map<string, string>();
      cookies.set(host, c);
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const i = pair!.indexOf('=');
        c.set(pair!.slice(0, i).trim(), pair!.slice(i + 1).trim());
      }
    },
  };
}

/**
 * Runs a browser's part of the sign-in with fetch: File Cloud's /auth/oidc/login, the provider's
 * authorization endpoint and form, up to (not into) File Cloud's callback. Returns the callback URL.
 */
export async function authorize(fcUrl: string, login: string, password: string, query = ''): Promise<string> {
  const cookies = jar();
  const start = await fetch(`${fcUrl}/auth/oidc/login${query}`, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`/auth/oidc/login answered ${start.status}: ${await start.text()}`);
  let url = start.headers.get('location')!;
  for (let hops = 0; hops < 10; hops++) {
    if (url.includes('/auth/oidc/callback')) return url;
    const isForm = /\/interaction\/[^/]+$/.test(new URL(url).pathname);
    const res = isForm
      ? await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...cookies.header(url) }, body: new URLSearchParams({ login, password }).toString() })
      : await fetch(url, { redirect: 'manual', headers: cookies.header(url) });
    cookies.take(url, res);
    const next = res.headers.get('location');
    if (!next) throw new Error(`the provider answered ${res.status} at ${url}: ${(await res.text()).slice(0, 300)}`);
    url = new URL(next, url).href;
    // The provider's form first shows (GET) and is then posted: the GET is skipped, the POST made at once.
  }
  throw new Error('too many redirects at the provider');
}

/** The whole sign-in with fetch: the callback's answer, and the token set when it signed in. */
export async function ssoSignIn(fcUrl: string, login: string, password: string): Promise<{ status: number; body: string; tokens?: { username: string; access_token: string; refresh_token: string } }> {
  const callback = await authorize(fcUrl, login, password);
  return finishCallback(fcUrl, callback);
}

/** Follows a callback URL (possibly on another node than fcUrl) and redeems the hand-off code on fcUrl. */
export async function finishCallback(fcUrl: string, callback: string): Promise<{ status: number; body: string; tokens?: { username: string; access_token: string; refresh_token: string } }> {
  // As a browser navigates: asking for a page, so a refusal is the HTML error page.
  const res = await fetch(callback, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  const body = await res.text();
  const location = res.headers.get('location') ?? '';
  const m = /#sso=(.+)$/.exec(location);
  if (res.status !== 302 || !m) return { status: res.status, body };
  const redeemed = await fetch(`${fcUrl}/auth/oidc/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: decodeURIComponent(m[1]!) }) });
  if (redeemed.status !== 200) return { status: redeemed.status, body: await redeemed.text() };
  return { status: 200, body, tokens: (await redeemed.json()) as { username: string; access_token: string; refresh_token: string } };
}
