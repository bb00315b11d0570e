// Other S3 tools see File Cloud's files as plain objects, and File Cloud sees theirs: with a server
// on the test S3 (Ceph radosgw), Debian's awscli v2 (/usr/bin/aws — the `aws` on PATH may be a
// pyenv v1 shim) and rclone list, copy, sync and check the same tree the HTTP API serves.
// scripts/test-services.sh installs both tools; without one a test skips here and fails in CI.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { s3Service, skipReason } from '../helpers/services.js';
import { bearer, encodePath, login } from '../helpers/client.js';

const execFileP = promisify(execFile);
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const ALICE_PASSWORD = 'alice-password-for-s3-tools';

const AWS = '/usr/bin/aws';
const RCLONE = ['/usr/bin/rclone', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, 'rclone'))].find((p) => existsSync(p));

/** Why a test needing `tool` skips (outside CI only); in CI it runs and fails on the missing tool. */
function toolSkip(tool: string, path: string | undefined): string | undefined {
  if (path && existsSync(path)) return undefined;
  if (process.env.CI) return undefined;
  return `${tool} is not installed (scripts/test-services.sh installs it); this test runs in CI`;
}
const requireTool = (tool: string, path: string | undefined): string => {
  assert.ok(path && existsSync(path), `${tool} is required (scripts/test-services.sh installs it) but is not installed`);
  return path;
};
const skipAws = () => skipReason('S3') ?? toolSkip('awscli (/usr/bin/aws)', AWS);
const skipRclone = () => skipReason('S3') ?? toolSkip('rclone', RCLONE);

/**
 * The environment of a tool: no AWS_* or RCLONE_* variables from the caller (a profile, a CA
 * bundle — rclone 1.60 fails on AWS_CA_BUNDLE with "LoadCustomCABundleError … unsupported
 * transport" even for an http:// endpoint — or a config file) and no Python overrides, only
 * the test S3's credentials.
 */
function toolEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(AWS_|RCLONE_|PYTHONPATH$|PYTHONHOME$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

async function aws(args: string[]): Promise<string> {
  const s = s3Service()!;
  const env = toolEnv({
    AWS_ACCESS_KEY_ID: s.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s.secretAccessKey,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_PAGER: '',
  });
  const full = ['--endpoint-url', s.endpoint, '--no-cli-pager', ...args];
  try {
    return (await execFileP(requireTool('awscli', AWS), full, { env, maxBuffer: 64 * MiB, timeout: 120_000 })).stdout;
  } catch (e) {
    // awscli 2.9 hides radosgw's error answers behind "'NoneType' object is not iterable": the real one is in --debug.
    const debug = await execFileP(AWS, ['--debug', ...full], { env, maxBuffer: 64 * MiB, timeout: 120_000 }).then(
      () => '(passed with --debug)',
      (d: { stderr?: string }) => (d.stderr ?? '').split('\n').filter((l) => /error|status|<Code>|Traceback|Exception/i.test(l)).slice(-25).join('\n'),
    );
    const err = e as { stderr?: string; message: string };
    throw new Error(`aws ${args.join(' ')} failed: ${err.stderr || err.message}\n--debug:\n${debug}`, { cause: e });
  }
}

/** rclone with the remote `fcs3:` configured entirely by environment variables, no config file. */
async function rclone(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const s = s3Service()!;
  const env = toolEnv({
    RCLONE_CONFIG_FCS3_TYPE: 's3',
    RCLONE_CONFIG_FCS3_PROVIDER: 'Ceph',
    RCLONE_CONFIG_FCS3_ENDPOINT: s.endpoint,
    RCLONE_CONFIG_FCS3_ACCESS_KEY_ID: s.accessKeyId,
    RCLONE_CONFIG_FCS3_SECRET_ACCESS_KEY: s.secretAccessKey,
    RCLONE_CONFIG_FCS3_REGION: s.region,
  });
  try {
    return await execFileP(requireTool('rclone', RCLONE), ['--config', '/dev/null', ...args], { env, maxBuffer: 64 * MiB, timeout: 180_000 });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`rclone ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
  }
}

type S3Server = { server: ServerProcess; url: string; admin: string; alice: string; bucket: string; prefix: string; work: string };

/** A File Cloud server on a fresh prefix of the test S3, with users admin and alice; always cleaned up. */
async function withS3Server(fn: (s: S3Server) => Promise<void>): Promise<void> {
  const s3 = await s3ServerOptions();
  const work = await mkdtemp(join(tmpdir(), 'fc-s3-tools-'));
  const dataDir = join(work, 'data');
  let server: ServerProcess | undefined;
  try {
    // the first start creates admin (only into an empty user table); alice is added beside the running server
    server = await startServer({ dataDir, args: s3.args, env: s3.env });
    const add = await runCli(['--data-dir', dataDir, '--storage', s3.storage, 'user', 'add', 'alice', '--password', ALICE_PASSWORD], { env: s3.env });
    assert.equal(add.code, 0, `user add alice: ${add.stderr}`);
    const admin = (await login(server.url, 'admin', server.adminPassword)).access_token;
    const alice = (await login(server.url, 'alice', ALICE_PASSWORD)).access_token;
    await fn({ server, url: server.url, admin, alice, bucket: s3.bucket, prefix: s3.prefix, work });
  } finally {
    await server?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

async function put(s: S3Server, token: string, path: string, body: Buffer): Promise<void> {
  const res = await fetch(`${s.url}/storage/${encodePath(path)}`, { method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream' }, body });
  assert.equal(res.status, 201, `PUT ${path}: ${await res.text()}`);
}

async function get(s: S3Server, token: string, path: string): Promise<Buffer> {
  const res = await fetch(`${s.url}/storage/${encodePath(path)}`, { headers: bearer(token) });
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

type Listing = { entries: { is_file: boolean; name: string; size: number; modified: string }[] };

/** Walks a folder through the HTTP API (GET of each folder): relative path → size for files, and the folders. */
async function walkHttp(s: S3Server, token: string, folder: string): Promise<{ files: Map<string, number>; folders: Set<string> }> {
  const files = new Map<string, number>();
  const folders = new Set<string>();
  const visit = async (rel: string) => {
    const res = await fetch(`${s.url}/storage/${encodePath(`${folder}${rel ? `/${rel}` : ''}`)}/`, { headers: bearer(token) });
    assert.equal(res.status, 200, `GET folder ${folder}/${rel}: ${res.status}`);
    for (const e of ((await res.json()) as Listing).entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.is_file) files.set(p, e.size);
      else {
        folders.add(p);
        await visit(p);
      }
    }
  };
  await visit('');
  return { files, folders };
}

/** `aws s3 ls --recursive` lines: `2026-11-23 19:20:22          3 some/key with spaces`. */
function parseLs(out: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of out.split('\n').filter((l) => l.trim() !== '')) {
    const r = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +(\d+) (.*)$/.exec(line);
    assert.ok(r, `unexpected aws s3 ls line: ${JSON.stringify(line)}`);
    m.set(r[2] as string, Number(r[1]));
  }
  return m;
}

test('aws s3 ls shows the files uploaded through File Cloud as plain objects, and aws s3 cp reads the same bytes', { skip: skipAws() }, async () => {
  await withS3Server(async (s) => {
    const files: [token: string, path: string, body: Buffer][] = [
      [s.admin, 'admin/notes/hello.txt', Buffer.from('hello from File Cloud\n')],
      [s.admin, 'admin/empty.bin', Buffer.alloc(0)],
      [s.alice, 'alice/photos/été 2026/ü x #1.bin', randomBytes(123_457)],
      // over 8 MiB (twice): a multipart upload inside File Cloud, still one plain object
      [s.alice, 'alice/big/large.bin', randomBytes(17 * MiB + 3)],
    ];
    for (const [token, path, body] of files) await put(s, token, path, body);

    const listed = parseLs(await aws(['s3', 'ls', '--recursive', `s3://${s.bucket}/${s.prefix}/`]));
    const objects = new Map([...listed].filter(([k]) => !k.endsWith('/')));
    assert.deepEqual(objects, new Map(files.map(([, path, body]) => [`${s.prefix}/${path}`, body.length])), 'one plain object per file, at PREFIX/<user>/<path>, with its size');
    // anything else is a zero-byte folder marker (the users' roots)
    for (const [k, size] of listed) if (k.endsWith('/')) assert.equal(size, 0, `marker ${k}`);
    assert.ok(listed.has(`${s.prefix}/alice/`), 'alice/ marker from user add');

    for (const [token, path, body] of [files[2]!, files[3]!]) {
      const served = await get(s, token, path);
      assert.equal(sha(served), sha(body), `File Cloud serves ${path}`);
      const local = join(s.work, `dl-${sha(Buffer.from(path)).slice(0, 8)}`);
      await aws(['s3', 'cp', `s3://${s.bucket}/${s.prefix}/${path}`, local]);
      assert.equal(sha(await readFile(local)), sha(served), `aws s3 cp of ${path} gives the bytes File Cloud serves`);
    }
  });
});

test('a file put by aws s3 cp is listed and served by File Cloud', { skip: skipAws() }, async () => {
  await withS3Server(async (s) => {
    // 9 MiB: above awscli's 8 MiB multipart threshold, so aws uploads it in parts
    const body = randomBytes(9 * MiB + 17);
    const local = join(s.work, 'x.bin');
    await writeFile(local, body);
    await aws(['s3', 'cp', local, `s3://${s.bucket}/${s.prefix}/alice/from-aws/x.bin`]);

    const res = await fetch(`${s.url}/storage/alice/from-aws/`, { headers: bearer(s.alice) });
    assert.equal(res.status, 200);
    const { entries } = (await res.json()) as Listing;
    assert.deepEqual(entries.map((e) => [e.name, e.is_file, e.size]), [['x.bin', true, body.length]]);
    assert.equal(sha(await get(s, s.alice, 'alice/from-aws/x.bin')), sha(body));
    // the user's root lists the folder aws created by its key alone
    const root = (await (await fetch(`${s.url}/storage/alice/`, { headers: bearer(s.alice) })).json()) as Listing;
    assert.ok(root.entries.some((e) => e.name === 'from-aws' && !e.is_file));
  });
});

test('rclone sync into a user folder: rclone check passes and File Cloud lists and serves exactly that tree', { skip: skipRclone() }, async (t: TestContext) => {
  await withS3Server(async (s) => {
    const src = join(s.work, 'tree');
    const tree: Record<string, Buffer> = {
      'readme.txt': Buffer.from('synced by rclone\n'),
      'empty.dat': Buffer.alloc(0),
      'one byte': Buffer.from('x'),
      'docs/Übersicht été.md': randomBytes(4096),
      'docs/with space/日本語 ファイル.bin': randomBytes(100_000),
      'docs/with space/deeper/still deeper/leaf.bin': randomBytes(1_000_001),
      'media/big 20MiB.bin': randomBytes(20 * MiB),
      'media/sample (1).jpg': randomBytes(65_536),
      '.hidden/dot.txt': Buffer.from('dot\n'),
    };
    for (const [p, b] of Object.entries(tree)) {
      await mkdir(join(src, p, '..'), { recursive: true });
      await writeFile(join(src, p), b);
    }
    const remote = `fcs3:${s.bucket}/${s.prefix}/alice/synced`;
    const syncStart = Date.now();
    await rclone(['sync', src, remote]);
    const synced = Date.now() - syncStart;
    const check = await rclone(['check', src, remote]);
    assert.match(check.stderr, /0 differences found/, check.stderr);

    type LsEntry = { Path: string; Size: number; IsDir: boolean };
    const ls = JSON.parse((await rclone(['lsjson', '-R', remote])).stdout) as LsEntry[];
    const rcloneFiles = new Map(ls.filter((e) => !e.IsDir).map((e) => [e.Path, e.Size]));
    const rcloneDirs = new Set(ls.filter((e) => e.IsDir).map((e) => e.Path));
    assert.deepEqual(rcloneFiles, new Map(Object.entries(tree).map(([p, b]) => [p, b.length])), 'rclone lists what it synced');

    const http = await walkHttp(s, s.alice, 'alice/synced');
    assert.deepEqual(http.files, rcloneFiles, 'File Cloud lists the same (path, size) as rclone lsjson -R');
    assert.deepEqual(http.folders, rcloneDirs, 'and the same folders');

    for (const [p, b] of Object.entries(tree)) assert.equal(sha(await get(s, s.alice, `alice/synced/${p}`)), sha(b), `download of ${p} through File Cloud`);
    t.diagnostic(`rclone sync of ${Object.keys(tree).length} files (${(Object.values(tree).reduce((n, b) => n + b.length, 0) / MiB).toFixed(1)} MiB) took ${synced} ms`);
  });
});
