import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool, ToolFailed, ToolMissing } from './run-tool.js';

// The tools here are Node itself, run as a real child process: what a stuck or chatty decoder does, on demand.
const node = (script: string) => [process.execPath, ['-e', script]] as const;
const limits = { timeoutMs: 10_000, maxOutputBytes: 1024 * 1024 };

test('what the tool writes to stdout is the answer; its arguments reach it as they are, never through a shell', async () => {
  const [cmd, args] = node('process.stdout.write(JSON.stringify(process.argv.slice(1)))');
  const out = await runTool(cmd, [...args, '$(touch /tmp/x)', 'a b;c', '*'], limits);
  assert.deepEqual(JSON.parse(out.toString()), ['$(touch /tmp/x)', 'a b;c', '*']);
});

test('a tool that outlives its time limit is killed and fails, at the limit rather than when it would have ended', async () => {
  const [cmd, args] = node('setTimeout(() => process.stdout.write("late"), 60_000)');
  const started = Date.now();
  await assert.rejects(runTool(cmd, args, { ...limits, timeoutMs: 300 }), (e) => e instanceof ToolFailed && /longer than 300 ms/.test(e.message));
  assert.ok(Date.now() - started < 10_000, `ended after ${Date.now() - started} ms`);
});

test('a tool that writes more than allowed is killed and fails', async () => {
  const [cmd, args] = node('setInterval(() => process.stdout.write(Buffer.alloc(65536)), 1)');
  await assert.rejects(runTool(cmd, args, { ...limits, maxOutputBytes: 100_000 }), (e) => e instanceof ToolFailed && /more than 100000 bytes/.test(e.message));
});

test('a tool that exits with an error fails with its stderr; one that is not installed is ToolMissing', async () => {
  const [cmd, args] = node('process.stderr.write("Syntax Error: no trailer"); process.exit(3)');
  await assert.rejects(runTool(cmd, args, limits), (e) => e instanceof ToolFailed && /exited with 3: Syntax Error: no trailer/.test(e.message));
  await assert.rejects(runTool('/nonexistent/pdftoppm', [], limits), (e) => e instanceof ToolMissing && e.tool === '/nonexistent/pdftoppm');
});

test('stdin is closed: a tool that waits for input (a password prompt) gets end of file at once', async () => {
  const [cmd, args] = node('let n = 0; process.stdin.on("data", (d) => (n += d.length)).on("end", () => process.stdout.write(String(n)))');
  assert.equal((await runTool(cmd, args, { ...limits, timeoutMs: 5000 })).toString(), '0');
});
