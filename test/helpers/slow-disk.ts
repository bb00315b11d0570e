import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../test/helpers/slow-disk.py', import.meta.url));
/** Debian's Python: the one python3-fusepy installs into. */
const PYTHON = '/usr/bin/python3';

export type SlowDisk = { readonly dir: string; unmount(): Promise<void> };

/** Why a slow disk cannot be mounted here, or undefined when it can (FUSE, fusepy, root). */
export function slowDiskMissing(): string | undefined {
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse on this machine';
  if (!existsSync('/usr/bin/fusermount3')) return 'fusermount3 is missing (Debian: fuse3; scripts/test-services.sh installs it)';
  if (spawnSync(PYTHON, ['-c', 'import fusepy']).status !== 0) return 'python3-fusepy is missing (scripts/test-services.sh installs it)';
  return undefined;
}

/**
 * A real filesystem (test/helpers/slow-disk.py, FUSE) on which closing a file whose path starts
 * with `slowPrefix` takes `closeDelayMs`, as on a network mount or a busy disk. Unmounted by
 * unmount(), which also stops the process and removes the directories.
 */
export async function mountSlowDisk(opts: { closeDelayMs: number; slowPrefix: string }): Promise<SlowDisk> {
  const base = await mkdtemp(join(tmpdir(), 'fc-slow-disk-'));
  const root = join(base, 'root');
  const dir = join(base, 'mnt');
  await mkdir(root);
  await mkdir(dir);
  const proc = spawn(PYTHON, [SCRIPT, root, dir, String(opts.closeDelayMs / 1000), opts.slowPrefix], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const unmount = async () => {
    spawnSync('/usr/bin/fusermount3', ['-u', '-z', dir]);
    const gone = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
    if (!gone) {
      proc.kill('SIGKILL');
      await exited;
    }
    await rm(base, { recursive: true, force: true });
  };
  // Mounted once /proc/mounts lists it (the script stays in the foreground).
  const deadline = performance.now() + 10_000;
  while (!(await readFile('/proc/mounts', 'utf8')).split('\n').some((l) => l.split(' ')[1] === dir)) {
    if (proc.exitCode !== null || performance.now() > deadline) {
      await unmount();
      throw new Error(`the slow disk did not mount: ${stderr.trim() || 'no error output'}`);
    }
    await sleep(20);
  }
  return { dir, unmount };
}
