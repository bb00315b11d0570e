import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The TypeScript sources under `dir` (.ts and .tsx), without tests and declaration files, for checks that read code as text. */
export async function sources(dir: string, out: string[] = []): Promise<string[]> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await sources(p, out);
    else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}
