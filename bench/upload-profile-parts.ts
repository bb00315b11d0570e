/**
 * `node dist/bench/upload-profile-parts.js FILE.cpuprofile UPLOADS [CPU_US]`:
 * a CPU profile of uploads (small-uploads-probe.js --profile) by part of an
 * upload (docs/performance.md "Small-file uploads"). Each sample goes to the
 * first part, in the order below, that any frame of its stack belongs to, so
 * the parts do not overlap; µs per upload of the profile's busy time, and,
 * given CPU_US (the CPU per upload measured in the same run), scaled to it.
 * Async code resumed after an await has only the resumed function's frames
 * on its stack: Kysely's internals resumed that way land in "the rest of the
 * SQL path".
 */
import { readFileSync } from 'node:fs';

type Frame = { functionName: string; url: string };
type Node = { id: number; callFrame: Frame; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const PARTS: [string, (f: Frame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['metadata: search index + change journal (one transaction)', (f) => /src\/store\/(search|changes)-repo|src\/services\/search\.js/.test(f.url)],
  ['metadata: leases (acquire, release, renew timer)', (f) => /src\/store\/leases-repo|src\/storage\/coordination/.test(f.url) && f.functionName !== 'whileHeld'],
  ['metadata: usage (quota read, used += size)', (f) => /src\/store\/usage-repo|src\/services\/usage/.test(f.url)],
  ['metadata: the rest of the SQL path (Kysely, better-sqlite3)', (f) => /node_modules\/kysely|src\/store\//.test(f.url)],
  ['staging: open, write, fsync, close', (f) => /storage\/local\/write/.test(f.url) && /^(receive|stageFile)$/.test(f.functionName)],
  ['the staging name removed (fs.rm)', (f) => /storage\/local\/write/.test(f.url) && f.functionName === 'removeStaging'],
  ['commit: confinement walk, link/rename', (f) => /storage\/local\/(write|confine)/.test(f.url)],
  ['storage events (other listeners)', (f) => /src\/storage\/events/.test(f.url)],
  ['access log (pino, sonic-boom)', (f) => /node_modules\/(pino|sonic-boom|thread-stream)/.test(f.url)],
  ['auth', (f) => /src\/app\/auth-plugin|src\/services\/auth/.test(f.url)],
  ['HTTP: node:http, Fastify, routing, socket writes', (f) => /node_modules\/(fastify|find-my-way|ajv|@fastify)|node:_http|src\/routes|src\/app/.test(f.url) || /^(writeUtf8String|writev|writeLatin1String|writeBuffer)$/.test(f.functionName)],
  ['V8/native unattributed ((program))', (f) => f.functionName === '(program)'],
];

function main(): void {
  const [file, uploadsArg, cpuArg] = process.argv.slice(2);
  const uploads = Number(uploadsArg);
  if (!file || !(uploads > 0)) {
    console.error('usage: node dist/bench/upload-profile-parts.js FILE.cpuprofile UPLOADS [CPU_US_PER_UPLOAD]');
    process.exit(2);
  }
  const cpu = Number(cpuArg ?? 0);
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const total = new Map<string, number>(PARTS.map(([k]) => [k, 0]));
  let other = 0;
  let all = 0;
  p.samples.forEach((leaf, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    all += dt;
    const stack: Frame[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id);
      if (n) stack.push(n.callFrame);
    }
    const part = PARTS.find(([, test]) => stack.some(test));
    if (part) total.set(part[0], (total.get(part[0]) ?? 0) + dt);
    else other += dt;
  });
  const busy = all - (total.get('idle') ?? 0);
  console.log(`wall ${(all / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s, ${uploads} uploads: ${(busy / uploads).toFixed(0)} µs busy per upload${cpu ? `; scaled to ${cpu} µs CPU per upload` : ''}`);
  console.log(`| part | share of busy time | µs busy per upload |${cpu ? ' µs CPU per upload |' : ''}`);
  for (const [k, v] of [...total, ['other (Node internals: streams, promises, timers)', other] as const]) {
    if (k === 'idle') continue;
    console.log(`| ${k} | ${((100 * v) / busy).toFixed(1)} % | ${(v / uploads).toFixed(0)} |${cpu ? ` ${Math.round((cpu * v) / busy)} |` : ''}`);
  }
}

main();
