// A command-line tool run by a test (a real client: rclone, sftp, cadaver …), its output kept.
import { spawn } from 'node:child_process';

export type Exec = { code: number | null; out: string };

/** Runs a command, resolving with its exit code and output whatever the code (killed after `timeoutMs`). */
export function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<Exec> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    // A tool that exits before reading its input (a mount that forks away) closes the pipe: no error of the test's.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

