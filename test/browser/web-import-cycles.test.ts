import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/server.js';

const WEB_SRC = join(REPO_ROOT, 'web', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(name) ? [p] : [];
  });
}

/** The module a relative specifier names, as Vite resolves it (with or without an extension). */
function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/**
 * Every import between modules of web/src, type-only ones included: a
 * type-only cycle is erased at build time but still ties two modules
 * together, and it is where a real cycle starts.
 */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    // preProcessFile lists static imports, re-exports and import() of a file, comments skipped.
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const deps = info.importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolveImport(file, spec))
      .filter((p): p is string => p !== undefined);
    graph.set(file, deps);
  }
  return graph;
}

/** Each cycle found by a depth-first walk, as the chain of modules that closes it. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const done = new Set<string>();
  const onPath: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    const at = onPath.indexOf(node);
    if (at >= 0) return void cycles.push([...onPath.slice(at), node]);
    if (done.has(node)) return;
    onPath.push(node);
    for (const dep of graph.get(node) ?? []) visit(dep);
    onPath.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return cycles;
}

test('the web UI has no import cycles between its modules (type-only imports count)', () => {
  const graph = importGraph(sourceFiles(WEB_SRC));
  // The walk must see the modules and their edges, or "no cycles" would prove nothing.
  assert.ok(graph.size > 20, `found ${graph.size} modules under web/src`);
  assert.ok((graph.get(join(WEB_SRC, 'components', 'FileList.tsx')) ?? []).includes(join(WEB_SRC, 'components', 'FileRow.tsx')), 'FileList → FileRow edge seen');
  const cycles = findCycles(graph).map((c) => c.map((p) => relative(WEB_SRC, p)).join(' → '));
  assert.deepEqual(cycles, []);
});
