// The layers of src/ are enforced by the lint (eslint.config.js, docs/architecture.md "Layers"): this
// lints one line of source as if it sat in each layer and checks that an upward import fails and a
// downward one passes, so the rule cannot quietly stop applying (a renamed folder, a changed glob).
// Within a layer the lint allows any import, so the import graph's circles are found here, with the
// TypeScript compiler's parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { repoRoot } from '../helpers/services.js';

const eslint = new ESLint({ cwd: repoRoot });
/** What `rule` says of `source` linted as if it sat at `file` (relative to the repository). */
async function complaints(source: string, file: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\n`, { filePath: join(repoRoot, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === rule).map((m) => m.message);
}

const CASES: { file: string; imports: string; allowed: boolean }[] = [
  { file: 'src/domain/x.ts', imports: '../store/metadata-store.js', allowed: false },
  { file: 'src/domain/x.ts', imports: '../lib/clock.js', allowed: true },
  { file: 'src/lib/x.ts', imports: '../http/url.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../services/files.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../http/schemas.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../domain/errors.js', allowed: true },
  { file: 'src/storage/s3/x.ts', imports: '../../http/mime.js', allowed: false },
  { file: 'src/storage/s3/x.ts', imports: '../../lib/mime.js', allowed: true },
  { file: 'src/services/x.ts', imports: '../routes/storage.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../app/build-app.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../dav/paths.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../store/metadata-store.js', allowed: true },
  { file: 'src/routes/x.ts', imports: '../app/build-app.js', allowed: false },
  { file: 'src/routes/x.ts', imports: '../services/files.js', allowed: true },
  { file: 'src/app/x.ts', imports: '../cli/serve.js', allowed: false },
  { file: 'src/app/x.ts', imports: '../main.js', allowed: false },
  { file: 'src/cli/x.ts', imports: '../main.js', allowed: true },
  // The sync client is a client: its own modules and Node's, never the server's.
  { file: 'packages/sync/src/x.ts', imports: '../../../src/services/files.js', allowed: false },
  { file: 'packages/sync/src/x.ts', imports: '../../src/lib/clock.js', allowed: false },
  { file: 'packages/sync/src/x.ts', imports: './planner.js', allowed: true },
];

test('the lint refuses an import from a layer above and allows one from below', async () => {
  for (const c of CASES) {
    const layered = await complaints(`import type { X } from '${c.imports}';\nexport type Y = X;`, c.file, 'no-restricted-imports');
    assert.equal(layered.length === 0, c.allowed, `${c.file} importing ${c.imports}: ${layered.join('; ') || 'no layering error'}`);
  }
});

// A service returns domain records; the API's snake_case spelling is the front end's (src/routes/views.ts).
// Each sample is linted as if it sat at `file`: `wire` says whether the lint must call it a service spelling the wire.
const WIRE_CASES: { file: string; source: string; wire: boolean }[] = [
  { file: 'src/services/x.ts', source: 'export const v = (ms: number) => ({ created_at: new Date(ms).toISOString() });', wire: true },
  { file: 'src/services/x.ts', source: "export const v = { 'is_file': true };", wire: true },
  { file: 'src/services/x.ts', source: 'export type V = { readonly last_used_at: string };', wire: true },
  { file: 'src/services/x.ts', source: 'export interface V { is_file: boolean }', wire: true },
  { file: 'src/services/deep/x.ts', source: 'export const v = { upload_only: false };', wire: true },
  { file: 'src/services/x.ts', source: 'export const v = (ms: number) => ({ createdAt: ms, isFile: true });', wire: false },
  // The storage error codes a storageCall maps to messages are the seam's codes, not the wire.
  { file: 'src/services/x.ts', source: "declare const storageCall: (f: () => void, m: object) => void;\nstorageCall(() => {}, { already_exists: 'taken' });", wire: false },
  { file: 'src/services/x.test.ts', source: 'export const v = { created_at: 1 };', wire: false },
  { file: 'src/routes/x.ts', source: 'export const v = (ms: number) => ({ created_at: new Date(ms).toISOString() });', wire: false },
];

test('the lint refuses a snake_case wire key built in a service, and allows it in a front end', async () => {
  for (const c of WIRE_CASES) {
    const wire = await complaints(c.source, c.file, 'no-restricted-syntax');
    assert.equal(wire.length > 0, c.wire, `${c.file}: ${c.source}: ${wire.join('; ') || 'no wire-key error'}`);
  }
});

// docs/architecture.md: "No route module passes 300 lines" — a route that grows moves its schemas or
// its presentation out (routes/*-schemas.ts, src/basic/, src/share-pages/) instead of piling up.
test('no route module passes 300 lines', async () => {
  const dir = join(repoRoot, 'src', 'routes');
  const long: string[] = [];
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts') || name.endsWith('-schemas.ts')) continue;
    const lines = (await readFile(join(dir, name), 'utf8')).split('\n').length - 1;
    if (lines > 300) long.push(`${name}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});

/** Every module of src/ (tests aside) and the modules it imports, type-only imports and re-exports included, as repository paths. */
async function importGraph(): Promise<Map<string, string[]>> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !/\.test(-suite)?\.ts$/.test(e.name)) files.push(p);
    }
  };
  await walk(join(repoRoot, 'src'));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest);
    const imported: string[] = [];
    for (const s of source.statements) {
      const from = (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : undefined;
      if (from === undefined || !from.startsWith('.')) continue;
      const target = resolve(dirname(file), from.replace(/\.js$/, '.ts'));
      if (known.has(target)) imported.push(relative(repoRoot, target));
    }
    graph.set(relative(repoRoot, file), imported);
  }
  return graph;
}

/** The circles of an import graph: each group of modules that reach one another (Tarjan's strongly connected components), and a module that imports itself. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = stack.splice(stack.indexOf(v));
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the circle check finds a circle of three, one of a module importing itself, and none in a tree', () => {
  const planted = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []], ['e', ['e', 'a']]]);
  assert.deepEqual(circles(planted), [['a', 'b', 'c'], ['e']]);
  assert.deepEqual(circles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), []);
});

test('the import graph of src/ has no circle, type-only imports included', async () => {
  const graph = await importGraph();
  assert.ok(graph.size > 200 && [...graph.values()].some((to) => to.includes('src/services/operations.ts')), 'the graph reads the imports');
  assert.deepEqual(circles(graph), [], 'each circle: move the name the modules share down to where both can see it (as src/services/door.ts does for the operation layer)');
});
