import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from '../config/load.js';

/** Reads the whole of standard input; the trailing newline is not part of the password. */
export async function passwordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Asks on the terminal without echoing, twice when `confirm`. */
export async function passwordFromTerminal(prompt: string, confirm: boolean): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the password: use --password or --password-stdin');
  const first = await askHidden(prompt);
  if (confirm && (await askHidden('Repeat the password: ')) !== first) throw new UsageError('the two passwords differ');
  return first;
}

function askHidden(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  const muted = new Writable({ write: (_chunk, _enc, cb) => cb() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  return new Promise((resolve) => {
    rl.question('', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}
