import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTIONS, parseDatabaseUrl, parseStorageUrl } from '../../src/config/options.js';
import { fileCloudLocation, nginxBinary, nginxSkipReason } from '../helpers/nginx.js';
import { REPO_ROOT } from '../helpers/server.js';

/**
 * deploy/cluster/ cannot run here (no Docker), so its files are checked for
 * what would break a real deployment: every setting is an option File Cloud
 * knows with a value it accepts, both nodes share the same backing services,
 * and the load balancer's configuration passes `nginx -t` and matches the
 * proxy settings the nginx tests run against.
 */
const dir = join(REPO_ROOT, 'deploy', 'cluster');
const compose = () => readFileSync(join(dir, 'compose.yaml'), 'utf8');
const nginxConf = () => readFileSync(join(dir, 'nginx.conf'), 'utf8');

/** The File Cloud environment of the compose file's shared node definition, with ${…} filled from env.example. */
function nodeEnvironment(): Record<string, string> {
  const example = Object.fromEntries(
    readFileSync(join(dir, 'env.example'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const anchor = compose().split(/^x-file-cloud: &file-cloud$/m)[1]?.split(/^services:$/m)[0] ?? '';
  const env = anchor.split(/^ {2}environment:$/m)[1]?.split(/^ {2}\S/m)[0] ?? '';
  const out: Record<string, string> = {};
  for (const m of env.matchAll(/^ {4}([A-Z_]+): (.*)$/gm)) {
    out[m[1] as string] = (m[2] as string).replace(/^"|"$/g, '').replace(/\$\{([A-Z_]+)(:-[^}]*)?\}/g, (_, name: string) => example[name] ?? '');
  }
  return out;
}

test('deploy/cluster: both nodes share one definition and every FILE_CLOUD_* setting is a valid option', () => {
  const text = compose();
  for (const service of ['file-cloud-1', 'file-cloud-2', 'nginx', 'postgres', 'redis', 'minio', 'bucket']) assert.match(text, new RegExp(`^  ${service}:`, 'm'), service);
  assert.match(text, /^ {2}file-cloud-1: \*file-cloud$/m);
  assert.match(text, /^ {2}file-cloud-2: \*file-cloud$/m);
  const env = nodeEnvironment();
  const known = new Map<string, { parse(raw: string): unknown }>(Object.values(OPTIONS).map((o) => [o.env, o]));
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('AWS_')) continue;
    const option = known.get(name);
    assert.ok(option, `${name} is not an option of File Cloud`);
    if (value !== '') option.parse(value);
  }
  assert.equal(parseDatabaseUrl(env.FILE_CLOUD_DATABASE ?? '').kind, 'postgres');
  assert.equal(parseStorageUrl(env.FILE_CLOUD_STORAGE ?? '').kind, 's3');
  assert.match(env.FILE_CLOUD_REDIS ?? '', /^redis:\/\//);
  assert.ok(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY, 'S3 credentials come from the standard AWS variables');
});

test('deploy/cluster: the load balancer proxies as the tested nginx configuration does, to both nodes', () => {
  const conf = nginxConf();
  assert.match(conf, /upstream file_cloud \{[^}]*server file-cloud-1:8000[^}]*server file-cloud-2:8000/s);
  const directives = (s: string) =>
    s
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter((l) => l.startsWith('proxy_') || l.startsWith('client_max_body_size'));
  const tested = directives(fileCloudLocation('file_cloud'));
  const deployed = directives(conf);
  for (const d of tested) assert.ok(deployed.includes(d), `nginx.conf lacks "${d}" of the tested configuration`);
});

test('deploy/cluster: nginx -t accepts the load balancer configuration', { skip: nginxSkipReason(process.env) }, async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'fc-nginx-t-'));
  try {
    for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) await mkdir(join(tmp, d));
    // The node names resolve only inside Compose's network: any address checks the syntax.
    const server = nginxConf().replace(/file-cloud-[12]:8000/g, '127.0.0.1:9');
    await writeFile(
      join(tmp, 'nginx.conf'),
      `pid ${tmp}/nginx.pid; error_log ${tmp}/logs/error.log; events {}
http { client_body_temp_path ${tmp}/body; proxy_temp_path ${tmp}/proxy; fastcgi_temp_path ${tmp}/fastcgi; uwsgi_temp_path ${tmp}/uwsgi; scgi_temp_path ${tmp}/scgi;
${server.replace('listen 80;', 'listen 127.0.0.1:9;')}
}`,
    );
    const r = spawnSync(nginxBinary() as string, ['-t', '-p', tmp, '-c', join(tmp, 'nginx.conf'), '-e', join(tmp, 'logs', 'error.log')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
