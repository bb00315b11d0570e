// `serve` logs for whoever reads them (docs/operations.md "Logs"): short readable lines when stdout
// is a terminal, JSON lines when it is a pipe or a file (a log shipper, systemd, Docker), JSON on a
// terminal too with --log-format json. The terminal is a real pseudo-terminal: util-linux's
// `script` runs the server on one, as `npm start` in a terminal window does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, REPO_ROOT, startServer } from '../helpers/server.js';

const SCRIPT = '/usr/bin/script';
const hasScript = spawnSync(SCRIPT, ['--version']).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TIME = String.raw`\d\d:\d\d:\d\d\.\d{3}`;
const LISTENING = /File Cloud listening on (http:\/\/\S+)/;

/** Polls `read()` until `re` matches, for up to `ms` (the server writes its lines asynchronously). */
async function waitFor(read: () => string, re: RegExp, ms = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = re.exec(read());
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`no ${re} in the output within ${ms} ms:\n${read()}`);
    await sleep(50);
  }
}

/**
 * `serve` on a pseudo-terminal, stopped with Ctrl-C typed into it (the terminal sends SIGINT to
 * the server, as for a person at the keyboard). Resolves with everything it printed, line ends
 * as \n, once it has exited.
 */
async function serveOnTerminal(args: string[], during: (url: string, output: () => string) => Promise<void>): Promise<{ output: string; code: number | null }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-pty-'));
  const command = ['exec', process.execPath, BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ').replace(/^'exec'/, 'exec');
  const env: NodeJS.ProcessEnv = {};
  // A developer's own FILE_CLOUD_* settings would change what is tested.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FILE_CLOUD_')) env[k] = v;
  Object.assign(env, { FILE_CLOUD_LOG_LEVEL: 'info', TERM: 'dumb' });
  const proc = spawn(SCRIPT, ['-qfec', command, '/dev/null'], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let raw = '';
  proc.stdout.on('data', (d: Buffer) => (raw += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (raw += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const output = () => raw.replace(/\r\n/g, '\n');
  try {
    const url = (await waitFor(output, LISTENING, 30_000))[1] as string;
    await during(url, output);
    proc.stdin.write('\x03');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return { output: output(), code };
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

const jsonLines = (out: string) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

// No --workers: what `npm start` runs (on a small box one process); --workers 2: the workers' lines, which they print to the
// terminal they inherit from the primary.
for (const args of [[], ['--workers', '2']]) {
  test(`on a terminal, serve${args.length ? ` ${args.join(' ')}` : ''} prints short readable lines around the first-run password: configuration, each request, shutdown`, { skip: !hasScript && `${SCRIPT} (util-linux) is missing` }, async () => {
    const run = await serveOnTerminal(args, async (url, output) => {
      assert.equal((await fetch(`${url}/is_file_cloud`, { method: 'HEAD' })).status, 200);
      assert.equal((await fetch(`${url}/api/stats`)).status, 401);
      await waitFor(output, /GET \/api\/stats 401/);
    });
    assert.equal(run.code, 0, run.output);
    const out = run.output;
    assert.match(out, /First run: created user "admin" with this password \(shown once\):\n\n {4}\S{12,}\n/);
    assert.match(out, new RegExp(`^${TIME} INFO  effective configuration workers=\\d+\\n {4}dataDir=\\S+`, 'm'));
    assert.match(out, /^ {4}.*port=0\b/m, 'the configuration is there, as key=value');
    assert.match(out, new RegExp(`^${TIME} INFO  HEAD /is_file_cloud 200 \\d+(\\.\\d)? ms$`, 'm'));
    assert.match(out, new RegExp(`^${TIME} INFO  GET /api/stats 401 \\d+(\\.\\d)? ms$`, 'm'));
    // The terminal echoes the Ctrl-C as ^C in front of the next line.
    assert.match(out, new RegExp(`^(\\^C)?${TIME} INFO  shutting down signal=SIGINT$`, 'm'));
    assert.deepEqual(out.split('\n').filter((l) => l.includes('{"level"')), [], 'no JSON log line');
    const requestLines = out.split('\n').filter((l) => / (HEAD|GET) \//.test(l));
    assert.equal(requestLines.length, 2, out);
    for (const l of requestLines) assert.doesNotMatch(l, /remoteAddress|reqId|responseTime/, 'a request line holds only what a person reads');
  });
}

test('on a terminal, --log-format json keeps JSON lines', { skip: !hasScript && `${SCRIPT} (util-linux) is missing` }, async () => {
  const run = await serveOnTerminal(['--workers', '1', '--log-format', 'json'], async (url, output) => {
    assert.equal((await fetch(`${url}/is_file_cloud`, { method: 'HEAD' })).status, 200);
    await waitFor(output, /"url":"\/is_file_cloud"/);
  });
  assert.equal(run.code, 0, run.output);
  const lines = jsonLines(run.output);
  assert.ok(lines.some((l) => l.msg === 'effective configuration' && typeof l.config === 'object'));
  assert.ok(lines.some((l) => l.msg === 'request completed' && (l.req as { url?: string }).url === '/is_file_cloud'));
  assert.doesNotMatch(run.output, new RegExp(`^${TIME} INFO`, 'm'));
});

test('piped, serve keeps JSON lines (for a log shipper), the first-run banner aside', async () => {
  const server = await startServer({ args: ['--workers', '1'], env: { FILE_CLOUD_LOG_LEVEL: 'info', FILE_CLOUD_LOG_FORMAT: 'auto' } });
  try {
    assert.equal((await fetch(`${server.url}/is_file_cloud`, { method: 'HEAD' })).status, 200);
    await waitFor(() => server.output().stdout, /"url":"\/is_file_cloud"/);
  } finally {
    await server.dispose();
  }
  const out = server.output().stdout;
  const lines = jsonLines(out);
  const config = lines.find((l) => l.msg === 'effective configuration');
  assert.equal((config?.config as { logFormat?: string } | undefined)?.logFormat, 'auto');
  const request = lines.find((l) => l.msg === 'request completed');
  assert.deepEqual([(request?.req as { method?: string })?.method, (request?.req as { url?: string })?.url, (request?.res as { statusCode?: number })?.statusCode], ['HEAD', '/is_file_cloud', 200]);
  assert.equal(typeof request?.responseTime, 'number');
  assert.doesNotMatch(out, new RegExp(`^${TIME} INFO`, 'm'), 'no readable line: a pipe is not a person');
});
