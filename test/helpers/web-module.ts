import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { REPO_ROOT } from './server.js';

/**
 * Loads a module of the web app (web/src/…, built by Vite, not by this
 * tsconfig) for a test of its rules: compiled here and imported from a data:
 * URL, with its own relative imports loaded the same way (those into src/,
 * from the server's build). Only for modules that touch no DOM.
 */
export async function loadWebModule<T>(path: string): Promise<T> {
  return (await import(await dataUrl(join(REPO_ROOT, 'web', 'src', path)))) as T;
}

async function dataUrl(file: string): Promise<string> {
  const source = await readFile(file.endsWith('.ts') ? file : `${file}.ts`, 'utf8');
  let js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  for (const [, spec] of js.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const dep = join(dirname(file), spec as string);
    if (!relative(join(REPO_ROOT, 'web', 'src'), dep).startsWith('..')) js = js.replaceAll(`from '${spec}'`, `from '${await dataUrl(dep)}'`);
    // The server's modules the web app shares (src/lib/i18n: the catalogs), as the server build compiled them.
    else if (!relative(join(REPO_ROOT, 'src'), dep).startsWith('..')) js = js.replaceAll(`from '${spec}'`, `from '${pathToFileURL(join(REPO_ROOT, 'dist', `${relative(REPO_ROOT, dep)}.js`)).href}'`);
  }
  return `data:text/javascript;base64,${Buffer.from(js).toString('base64')}`;
}
