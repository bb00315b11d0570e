/**
 * `node dist/bench/profile-summary.js FILE.cpuprofile [--top N]`: where a
 * V8 CPU profile (from `node --cpu-prof`, e.g. `npm run bench -- --profile`)
 * spends its time, as text: self time by area (our src/ files, each npm
 * package, Node internals, GC, idle) and the top functions by self and by
 * inclusive time. For flame graphs open the same file in Chrome DevTools
 * (Performance → Load profile) or https://www.speedscope.app.
 */
import { readFileSync } from 'node:fs';

type Frame = { functionName: string; url: string; lineNumber: number };
type Node = { id: number; callFrame: Frame; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function area(f: Frame): string {
  const { url, functionName } = f;
  if (!url) {
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') return functionName;
    return '(native)';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const own = /\/dist\/(src\/.*)\.js$/.exec(url);
  if (own) return own[1] as string;
  return url.replace(/^file:\/\//, '');
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const topIdx = args.indexOf('--top');
  const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 25;
  if (!file) {
    console.error('usage: node dist/bench/profile-summary.js FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;

  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const areas = new Map<string, number>();
  const fnSelf = new Map<string, number>();
  const fnTotal = new Map<string, number>();
  const key = (f: Frame) => `${f.functionName || '(anonymous)'}  ${area(f)}:${f.lineNumber + 1}`;
  for (const [id, t] of self) {
    const n = byId.get(id) as Node;
    add(areas, area(n.callFrame), t);
    add(fnSelf, key(n.callFrame), t);
    // Inclusive: every distinct function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key((byId.get(cur) as Node).callFrame);
      if (!seen.has(k)) {
        seen.add(k);
        add(fnTotal, k, t);
      }
    }
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const ms = (t: number) => `${(t / 1000).toFixed(0).padStart(7)} ms`;
  console.log(`${file}\nwall ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / total).toFixed(0)}%); percentages are of busy time\n`);
  const show = (title: string, m: Map<string, number>, n: number, skipIdle = true) => {
    console.log(title);
    [...m.entries()]
      .filter(([k]) => !skipIdle || !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .forEach(([k, t]) => console.log(`  ${pct(t)} ${ms(t)}  ${k}`));
    console.log('');
  };
  show('self time by area', areas, top);
  show('top functions, self time', fnSelf, top);
  show('top functions, inclusive time', fnTotal, top);
}

main();
