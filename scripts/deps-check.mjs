#!/usr/bin/env node
// `npm run deps:check`: what is due, without a bot. Three parts:
//  1. the Node.js lines (scripts/node-releases.json) with their phase today and the days to end-of-life,
//     and the Node versions this project pins (the node devDependency, the smoke set's 22, the Docker base);
//  2. the newest 22.x and 24.x on the npm registry against those pins;
//  3. `npm outdated`: every dependency with a newer release, majors marked.
// It changes nothing and exits 0; `--strict` exits 1 when something is due (a pinned line past its
// end-of-life or within 90 days of it, or a newer Node patch than the one pinned).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const strict = process.argv.includes('--strict');
const DAY = 86_400_000;
const today = new Date(new Date().toISOString().slice(0, 10));
const due = [];

const releases = JSON.parse(readFileSync(join(ROOT, 'scripts/node-releases.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const pinned24 = lock.packages?.['node_modules/node']?.version;
const pinned22 = /FC_NODE22_VERSION:-([\d.]+)/.exec(readFileSync(join(ROOT, 'scripts/smoke-node22.sh'), 'utf8'))?.[1];
const dockerBase = [...new Set([...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM (node:\S+)/gm)].map((m) => m[1]))];

const phaseOf = (r) => {
  const at = (d) => new Date(d);
  if (today >= at(r.end)) return 'end-of-life';
  if (r.maintenance && today >= at(r.maintenance)) return 'Maintenance LTS';
  if (r.lts && today >= at(r.lts)) return 'Active LTS';
  return today >= at(r.start) ? 'Current' : 'not yet released';
};

const uses = {
  20: 'the machines\' system Node (/usr/bin/node); not supported',
  22: `supported: smoke set in CI (node@${pinned22 ?? '?'})`,
  24: `developed, tested and shipped on: node@${pinned24 ?? '?'} (devDependency), ${dockerBase.join(', ')}`,
  26: 'not used yet',
};

console.log(`deps:check on ${today.toISOString().slice(0, 10)} (Node ${process.version}); engines: node ${pkg.engines?.node}`);
console.log(`Schedule from ${releases.source}; last checked ${releases.checked}.\n`);
const rows = [['Node', 'phase today', 'end-of-life', 'days left', 'this project']];
for (const [line, r] of Object.entries(releases.lines)) {
  const left = Math.round((new Date(r.end) - today) / DAY);
  rows.push([line, phaseOf(r), r.end, String(left), uses[line] ?? '']);
  const used = line === '22' || line === '24';
  if (used && left <= 90) due.push(`Node ${line} ${left <= 0 ? 'is past' : `reaches in ${left} days`} its end-of-life (${r.end}): move to the next LTS line`);
}
const latestLine = Object.entries(releases.lines).filter(([, r]) => phaseOf(r) === 'Active LTS').map(([l]) => l);
table(rows);
if (latestLine.length && !latestLine.includes('24')) console.log(`\nNote: the Active LTS line today is ${latestLine.join(', ')}; 24 is ${phaseOf(releases.lines['24'])}.`);

// The registry's newest release of each line the project pins.
const view = spawnSync('npm', ['view', 'node', 'versions', '--json'], { encoding: 'utf8', cwd: ROOT });
if (view.status === 0) {
  const versions = JSON.parse(view.stdout);
  const newest = (major) => versions.filter((v) => v.startsWith(`${major}.`) && !v.includes('-')).sort(cmp).at(-1);
  console.log('');
  for (const [major, pin] of [['22', pinned22], ['24', pinned24]]) {
    const n = newest(major);
    const mark = n && pin && cmp(n, pin) > 0 ? '  <- newer: update it' : '';
    if (mark) due.push(`node@${n} is out (pinned ${pin})`);
    console.log(`node ${major}.x: pinned ${pin ?? '?'}, newest on the registry ${n ?? '?'}${mark}`);
  }
} else {
  console.log(`\n(npm view node versions failed: ${view.stderr.trim().split('\n').at(-1)})`);
}

// npm outdated exits 1 when anything is outdated; its JSON is on stdout either way.
const out = spawnSync('npm', ['outdated', '--json', '--long'], { encoding: 'utf8', cwd: ROOT });
let outdated = {};
try {
  outdated = JSON.parse(out.stdout || '{}');
} catch {
  console.log(`\n(npm outdated gave no JSON: ${out.stderr.trim().split('\n').at(-1)})`);
}
const names = Object.keys(outdated).sort();
console.log('');
if (names.length === 0) console.log('Dependencies: all at their newest release.');
else {
  const o = [['package', 'current', 'wanted', 'latest', 'type', '']];
  for (const name of names) {
    const d = Array.isArray(outdated[name]) ? outdated[name][0] : outdated[name];
    const major = d.current && d.latest && majorOf(d.latest) !== majorOf(d.current);
    o.push([name, d.current ?? 'missing', d.wanted, d.latest, d.type ?? '', major ? 'MAJOR: read its changelog' : '']);
    if (d.current && d.wanted && d.current !== d.wanted) due.push(`${name} ${d.current} -> ${d.wanted} (within its range: npm update)`);
  }
  console.log('Dependencies with a newer release:');
  table(o);
}

console.log('');
if (due.length === 0) console.log('Nothing due.');
else {
  console.log('Due:');
  for (const d of due) console.log(`- ${d}`);
}
process.exit(strict && due.length > 0 ? 1 : 0);

function cmp(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
// 0.x majors are their minor (kysely 0.28 -> 0.29 is a major step).
function majorOf(v) {
  const [a, b] = v.split('.');
  return a === '0' ? `0.${b}` : a;
}
function table(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  rows.forEach((r, k) => {
    console.log(r.map((c, i) => String(c).padEnd(w[i])).join('  ').trimEnd());
    if (k === 0) console.log(w.map((n) => '-'.repeat(n)).join('  '));
  });
}
