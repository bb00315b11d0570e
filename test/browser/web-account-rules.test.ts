import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/**
 * web/src/lib/account-rules.ts is built by Vite, not by this tsconfig: compile
 * it here (it touches no DOM) and load it as a module.
 */
type Rules = {
  parseQuota(text: string): number | null | undefined;
  quotaText(bytes: number | null): string;
  newPasswordProblem(password: string, confirm: string, current?: string): string | null;
  keyExpiresIn(choice: string): number | undefined;
  clientName(ua: string | null | undefined): string | null;
  groupSecret(secret: string): string;
  cleanCode(text: string): string;
  generatePassword(length?: number): string;
  usernameProblem(name: string): string | null;
};
const loadRules = (): Promise<Rules> => loadWebModule<Rules>('lib/account-rules.ts');

const G = 1024 ** 3;

test('quota field in German: the catalog\'s words for none, and English ones too', async () => {
  const { parseQuota } = await loadRules();
  // The same module instance account-rules.ts imports (one data: URL per source); setLanguage writes a cookie.
  const i18n = await loadWebModule<{ setLanguage(choice: string, cookiePath: string): void }>('lib/i18n.ts');
  const g = globalThis as { document?: unknown };
  const had = g.document;
  g.document = { cookie: '', documentElement: { lang: 'en' } };
  try {
    i18n.setLanguage('de', '/');
    for (const w of ['unbegrenzt', 'Keins', 'kein Kontingent', 'none', '']) assert.equal(parseQuota(w), null, w);
    assert.equal(parseQuota('2,5 G'), 2.5 * G);
  } finally {
    i18n.setLanguage('auto', '/');
    g.document = had;
  }
  assert.equal(parseQuota('unbegrenzt'), undefined, 'back in English');
});

test('quota field: sizes in powers of 1024, empty or "none" for no quota, anything else refused', async () => {
  const { parseQuota, quotaText } = await loadRules();
  const cases: [string, number | null | undefined][] = [
    ['10G', 10 * G],
    ['10g', 10 * G],
    ['10 GB', 10 * G],
    ['10GiB', 10 * G],
    ['500M', 500 * 1024 ** 2],
    ['1.5T', 1.5 * 1024 ** 4],
    ['1,5T', 1.5 * 1024 ** 4],
    ['64k', 65_536],
    ['1048576', 1_048_576],
    ['1048576 B', 1_048_576],
    ['', null],
    ['  ', null],
    ['none', null],
    ['None', null],
    ['unlimited', null],
    ['unbegrenzt', undefined], // German words for none only in German (below)
    ['1,5,0T', undefined],
    ['0', undefined],
    ['0G', undefined],
    ['-1G', undefined],
    ['10X', undefined],
    ['G', undefined],
    ['10 G B', undefined],
    ['1e3', undefined],
    ['99999999999P', undefined], // beyond a safe integer
  ];
  for (const [text, want] of cases) assert.equal(parseQuota(text), want, JSON.stringify(text));
  // The field is prefilled with text that reads back to the same bytes.
  for (const bytes of [10 * G, 1536 * 1024 ** 2, 65_536, 1_000_001, 5 * 1024 ** 5]) assert.equal(parseQuota(quotaText(bytes)), bytes, String(bytes));
  assert.equal(quotaText(10 * G), '10G');
  assert.equal(quotaText(1536 * 1024 ** 2), '1536M');
  assert.equal(quotaText(1_000_001), '1000001');
  assert.equal(quotaText(null), '');
});

test('new password: long enough, typed twice the same, not the current one', async () => {
  const { newPasswordProblem } = await loadRules();
  const cases: [string, string, string | undefined, RegExp | null][] = [
    ['', '', undefined, /Enter a new password/],
    ['short', 'short', undefined, /at least 8/],
    ['long enough', 'long enougH', undefined, /do not match/],
    ['long enough', 'long enough', 'long enough', /same as the current/],
    ['long enough', 'long enough', 'old password', null],
    ['12345678', '12345678', undefined, null],
  ];
  for (const [p, c, cur, want] of cases) {
    const got = newPasswordProblem(p, c, cur);
    if (want === null) assert.equal(got, null, `${p}/${c}`);
    else assert.match(got ?? '', want, `${p}/${c}`);
  }
});

test('app password expiry choices become expires_in seconds; never leaves the field out', async () => {
  const { keyExpiresIn } = await loadRules();
  assert.equal(keyExpiresIn('never'), undefined);
  assert.equal(keyExpiresIn('30d'), 30 * 86_400);
  assert.equal(keyExpiresIn('90d'), 90 * 86_400);
  assert.equal(keyExpiresIn('365d'), 365 * 86_400);
});

test('session client names from User-Agent strings', async () => {
  const { clientName } = await loadRules();
  const cases: [string | null, string | null][] = [
    [null, null],
    ['', null],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Headless Chrome on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox on Windows'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge on Windows'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'Safari on iOS'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15', 'Safari on macOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
    ['curl/8.5.0', 'curl'],
    ['rclone/v1.68.2', 'rclone'],
    ['Microsoft-WebDAV-MiniRedir/10.0.19045', 'Microsoft-WebDAV-MiniRedir'],
    ['SomeTool/1.0', 'SomeTool/1.0'],
    ['x'.repeat(60), `${'x'.repeat(39)}…`],
  ];
  for (const [ua, want] of cases) assert.equal(clientName(ua), want, String(ua));
});

test('TOTP secret shown in groups of four; codes typed with spaces or dashes', async () => {
  const { groupSecret, cleanCode } = await loadRules();
  assert.equal(groupSecret('JBSWY3DPEHPK3PXP'), 'JBSW Y3DP EHPK 3PXP');
  assert.equal(groupSecret('JBSWY3DPEHPK3PXPAB'), 'JBSW Y3DP EHPK 3PXP AB');
  assert.equal(groupSecret(' JBSW Y3DP '), 'JBSW Y3DP');
  assert.equal(cleanCode(' 123 456 '), '123456');
  assert.equal(cleanCode('123-456'), '123456');
  assert.equal(cleanCode('abcd-efgh'), 'abcd-efgh', 'a recovery code keeps its dash');
  assert.equal(cleanCode('  abcd-efgh '), 'abcd-efgh');
  assert.equal(cleanCode(''), '');
});

test('generated passwords: the length asked for, no look-alike characters, never the same twice', async () => {
  const { generatePassword, newPasswordProblem } = await loadRules();
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const p = generatePassword();
    assert.equal(p.length, 16);
    assert.match(p, /^[a-km-zA-HJ-NP-Z2-9]+$/);
    assert.equal(newPasswordProblem(p, p), null);
    seen.add(p);
  }
  assert.equal(seen.size, 200);
  assert.equal(generatePassword(40).length, 40);
});

test('usernames: the obvious mistakes caught before asking the server', async () => {
  const { usernameProblem } = await loadRules();
  const cases: [string, boolean][] = [
    ['alice', true],
    ['Alice.Smith', true],
    ['', false],
    [' alice', false],
    ['alice ', false],
    ['.', false],
    ['..', false],
    ['a/b', false],
    ['a\\b', false],
  ];
  for (const [name, ok] of cases) assert.equal(usernameProblem(name) === null, ok, JSON.stringify(name));
});
