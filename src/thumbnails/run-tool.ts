import { spawn } from 'node:child_process';

/** The tool is not installed (or not on PATH): no thumbnail of its kind can be drawn on this node. */
export class ToolMissing extends Error {
  constructor(readonly tool: string) {
    super(`${tool} is not installed`);
  }
}

/** The tool ran and gave no picture: it failed, was killed at its time limit, or wrote more than allowed. */
export class ToolFailed extends Error {}

export type ToolLimits = {
  /** Wall-clock time the tool may run; then it is killed. */
  readonly timeoutMs: number;
  /** Bytes of output read at most; past them it is killed. */
  readonly maxOutputBytes: number;
};

/**
 * Runs a tool on a file and returns what it wrote to stdout. No shell: the
 * arguments go to the program as they are, so no name can become a command.
 * stdin is closed, so a tool that would prompt (a PDF's password) fails
 * instead of waiting. SIGKILL at the time limit: a decoder stuck in a
 * hostile file may not answer a gentler signal.
 */
export function runTool(command: string, args: readonly string[], limits: ToolLimits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    const chunks: Buffer[] = [];
    let total = 0;
    let stderr = '';
    let failure: Error | undefined;
    const stop = (why: Error) => {
      failure ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new ToolFailed(`${command} ran longer than ${limits.timeoutMs} ms`)), limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limits.maxOutputBytes) stop(new ToolFailed(`${command} wrote more than ${limits.maxOutputBytes} bytes`));
      else chunks.push(chunk);
    });
    // Kept short: it goes into an error's message, never to a client.
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 500) stderr += chunk.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      failure ??= e.code === 'ENOENT' ? new ToolMissing(command) : new ToolFailed(`${command} could not be started`, { cause: e });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0) reject(new ToolFailed(`${command} exited with ${code ?? signal}: ${stderr.trim().slice(0, 500)}`));
      else resolve(Buffer.concat(chunks, total));
    });
  });
}
