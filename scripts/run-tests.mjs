#!/usr/bin/env node
// Runs every compiled *.test.js under dist/ with node's test runner.
// Arguments filter test files by substring: `npm run test:only -- storage-path`.
//
// Before the tests, scripts/test-services.sh starts the backing services once for the whole run
// (Ceph radosgw as S3, PostgreSQL 15, Redis 7) in a fresh temp dir, all on 127.0.0.1. Their
// addresses reach the tests as FC_TEST_* variables (see test/helpers/services.ts); they are
// stopped by pid when the run ends, also on failure and on SIGINT/SIGTERM. FC_TEST_SERVICES=0
// skips them. Without CI, services that cannot start make those suites skip; with CI it fails.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'test-services.sh');
const LANES = join(dirname(fileURLToPath(import.meta.url)), 'test-lanes.mjs');
// test-services.sh output -> test environment
const ENV_NAMES = {
  S3_ENDPOINT: 'FC_TEST_S3_ENDPOINT',
  S3_REGION: 'FC_TEST_S3_REGION',
  S3_ACCESS_KEY: 'FC_TEST_S3_ACCESS_KEY',
  S3_SECRET_KEY: 'FC_TEST_S3_SECRET_KEY',
  DATABASE_URL: 'FC_TEST_DATABASE_URL',
  REDIS_URL: 'FC_TEST_REDIS_URL',
  CEPH_CONF: 'FC_TEST_CEPH_CONF',
};

// Which Node runs the tests, first: `npm test` puts node_modules/.bin/node (the node@24 devDependency)
// ahead of the system's Node, and every child a test starts uses process.execPath, this same binary.
const [major, minor] = process.versions.node.split('.').map(Number);
console.error(`run-tests: Node ${process.version} (${process.execPath}), ${process.arch}, modules ABI ${process.versions.modules}, N-API ${process.versions.napi}`);
if (major < 22 || (major === 22 && minor < 15)) {
  console.error(`run-tests: Node ${process.version} is below the supported minimum 22.15 (package.json engines). Run through npm (npm test, npm run test:only), which uses the Node 24 from node_modules/.bin.`);
  process.exit(1);
}
// A script a test starts that calls plain `node` (deploy/docker-entrypoint.sh, a #!/usr/bin/env node
// shebang, test-services.sh) gets this same Node too, also when run-tests is started without npm.
process.env.PATH = [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter);
// The native modules, loaded by this Node: a binary built for another Node fails here, once, with its cause.
{
  const require = createRequire(import.meta.url);
  try {
    const Database = require('better-sqlite3');
    const db = new Database(':memory:');
    const sqlite = db.prepare('select sqlite_version() as v').get().v;
    db.close();
    const sharp = require('sharp');
    const ssh2 = require('ssh2/lib/protocol/crypto.js').bindingAvailable ? 'native' : 'JavaScript (scripts/build-native.mjs did not build the binding for this Node)';
    console.error(`run-tests: better-sqlite3 ${require('better-sqlite3/package.json').version} (SQLite ${sqlite}), sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}), ssh2 ciphers ${ssh2}`);
  } catch (e) {
    console.error(`run-tests: a native module does not load on Node ${process.version}: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  }
}
// File Cloud's own optional native modules (scripts/build-native.mjs; FILE_CLOUD_NATIVE_CRYPTO=0 and
// FILE_CLOUD_NATIVE_FS=0 turn them off), as the built server loads them.
try {
  const { nativeGcmPath } = await import('../dist/src/lib/encryption/native-gcm.js');
  const { durableWritePath } = await import('../dist/src/storage/local/fs-ops.js');
  console.error(`run-tests: encrypted Range reads' and uploads' AES-GCM ${nativeGcmPath}; small uploads' staging write ${durableWritePath}`);
} catch (e) {
  console.error(`run-tests: the native modules' use unknown (dist/ is not built: ${e instanceof Error ? e.message : e})`);
}

const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
})('dist');
// Slow tests (dist/test/slow/, e.g. the > 4 GiB ZIP64 zip) run when FC_SLOW_TESTS=1 (.ci/run sets it)
// or when a filter names them; a developer's plain `npm test` leaves them out.
const slowWanted = process.env.FC_SLOW_TESTS === '1';
const isSlow = (f) => f.split(/[\\/]/).includes('slow');
// The longest files go first (the fault and slow suites take minutes each, a unit file milliseconds):
// two lanes then finish together instead of one lane starting a two-minute file near the end. `node
// --test` would sort them by name again; scripts/test-lanes.mjs runs them in this order.
const LONG_FIRST = ['slow', 'faults', 'cluster', 'clients', 'browser', 'security', 'process', 'routes'];
const laneOrder = (f) => {
  const parts = f.split(/[\\/]/); // dist/test/<suite>/…
  const i = parts[1] === 'test' ? LONG_FIRST.indexOf(parts[2]) : -1;
  return i < 0 ? LONG_FIRST.length : i;
};
const chosen = files
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => slowWanted || !isSlow(f) || filters.some((x) => x.includes('slow')))
  .sort((a, b) => laneOrder(a) - laneOrder(b) || (a < b ? -1 : a > b ? 1 : 0));
if (chosen.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
// The soak (dist/test/soak/) runs after the rest, alone. It judges memory growth under a steady
// load; beside another suite its throughput jumps when that suite ends, and V8 sizes each worker's
// heap to the allocation rate, so the tree's RSS steps up with no leak (docs/performance.md, "How
// the test run shares the cores"). Alone, the load it generates is the load it measures.
const runsAlone = (f) => f.split(/[\\/]/).join('/').includes('test/soak/');
const together = chosen.filter((f) => !runsAlone(f));
const alone = chosen.filter(runsAlone);

// Three files at a time on a 2-core machine: the fault and cluster suites spend much of their time
// waiting (a restart, a sweeper's interval, a killed node's lease), which two lanes left idle
// (docs/performance.md, "How the test run shares the cores"). FC_TEST_LANES=N overrides.
const LANES_TOGETHER = Number(process.env.FC_TEST_LANES || 3);
if (!Number.isInteger(LANES_TOGETHER) || LANES_TOGETHER < 1) {
  console.error(`run-tests: FC_TEST_LANES must be a whole number ≥ 1, not ${process.env.FC_TEST_LANES}`);
  process.exit(2);
}
let servicesDir; // set while services may be running
let child; // the current child process (services start, then node --test)
let signalled; // 'SIGINT' | 'SIGTERM' once one arrived

function stopServices() {
  if (!servicesDir) return;
  const dir = servicesDir;
  servicesDir = undefined;
  const r = spawnSync('bash', [SCRIPT, 'stop', dir], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) process.stderr.write(r.stderr ?? '');
  if (r.status !== 0) console.error(`run-tests: stopping the test services failed (${r.error?.message ?? `exit ${r.status}`}); left ${dir} in place`);
  else rmSync(dir, { recursive: true, force: true });
}

function onSignal(sig) {
  if (signalled) return;
  signalled = sig;
  // Ctrl-C already reached the child (same process group); a SIGTERM sent to us alone is forwarded.
  // The services script runs in its own process group (so a signal also ends the ceph/psql clients
  // it waits on); the daemons it started have their own sessions and are stopped by pid afterwards.
  const c = child;
  if (c && c.exitCode === null && c.signalCode === null) {
    const kill = (s) => {
      try {
        if (c.spawnargs.includes(SCRIPT)) process.kill(-c.pid, s);
        else c.kill(s);
      } catch {
        /* already gone */
      }
    };
    kill(sig);
    setTimeout(() => kill('SIGKILL'), 15_000).unref();
  }
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

/** Runs a command to its end; resolves to { code, signal, stdout } (stderr passes through, its tail kept). */
function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, opts);
    child = p;
    let stdout = '';
    let errTail = '';
    p.stdout?.setEncoding('utf8').on('data', (d) => (stdout += d));
    p.stderr?.setEncoding('utf8').on('data', (d) => {
      process.stderr.write(d);
      errTail = (errTail + d).slice(-2000);
    });
    p.on('error', (e) => (errTail += `\n${e.message}`));
    p.on('close', (code, signal) => {
      child = undefined;
      resolve({ code, signal, stdout, errTail });
    });
  });
}

/** Starts the services; returns the FC_TEST_* variables, or a reason they are unavailable. */
async function startServices() {
  if (process.env.FC_TEST_SERVICES === '0') return { reason: 'FC_TEST_SERVICES=0' };
  servicesDir = mkdtempSync(join(tmpdir(), 'fc-services-'));
  const t = Date.now();
  const r = await run('bash', [SCRIPT, 'start', servicesDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  if (signalled) return { reason: `interrupted (${signalled})` };
  if (r.code !== 0) {
    // the cause is the last line before the script's own cleanup ("start failed; stopping …")
    let lines = r.errTail.split('\n').map((l) => l.replace(/^\[services [\d:]+\] /, '').trim()).filter(Boolean);
    const cleanup = lines.findIndex((l) => l.startsWith('start failed;'));
    if (cleanup >= 0) lines = lines.slice(0, cleanup);
    const last = lines.at(-1);
    return { reason: `scripts/test-services.sh start ${r.signal ? `killed by ${r.signal}` : `exited ${r.code}`}${last ? `: ${last}` : ''}` };
  }
  const env = { FC_TEST_SERVICES_DIR: servicesDir };
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m && ENV_NAMES[m[1]]) env[ENV_NAMES[m[1]]] = m[2];
  }
  const missing = Object.values(ENV_NAMES).filter((k) => !env[k]);
  if (missing.length > 0) return { reason: `scripts/test-services.sh start printed no ${missing.join(', ')}` };
  console.error(`run-tests: test services up in ${((Date.now() - t) / 1000).toFixed(1)} s (${servicesDir})`);
  return { env };
}

let exitCode;
try {
  const services = await startServices();
  const env = { ...process.env };
  if (services.env) Object.assign(env, services.env);
  else {
    stopServices(); // whatever a failed start left behind
    if (signalled) throw new Error(services.reason);
    if (process.env.CI && process.env.FC_TEST_SERVICES !== '0') {
      throw new Error(`services unavailable: ${services.reason}; in CI the S3/PostgreSQL/Redis suites must run`);
    }
    console.error(`services unavailable: ${services.reason}; S3/PostgreSQL/Redis suites will skip`);
  }
  exitCode = 0;
  for (const [files, concurrency] of [
    [together, LANES_TOGETHER],
    [alone, 1],
  ]) {
    if (files.length === 0 || signalled) continue;
    if (files === alone && together.length > 0) console.error(`run-tests: now, alone: ${files.join(' ')}`);
    const r = await run(process.execPath, ['--enable-source-maps', LANES, String(concurrency), ...files], { stdio: 'inherit', env });
    if (r.code !== 0) exitCode = r.code ?? 1;
  }
} catch (e) {
  console.error(`run-tests: ${e instanceof Error ? e.message : e}`);
  exitCode = 1;
} finally {
  stopServices();
}
if (signalled) exitCode = signalled === 'SIGINT' ? 130 : 143;
process.exit(exitCode);
