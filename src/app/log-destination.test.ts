import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LineWriter } from './log-destination.js';

/** A LineWriter on a new file; `check` gets it and a reader of the file's text. */
async function onFile(check: (w: LineWriter, text: () => string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fc-log-'));
  const file = join(dir, 'out.log');
  const fd = openSync(file, 'w');
  try {
    await check(new LineWriter(fd), () => readFileSync(file, 'utf8'));
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

const flushed = (w: LineWriter) => new Promise<void>((resolve, reject) => w.flush((e) => (e ? reject(e) : resolve())));

test('LineWriter writes every line once, in order, lines taken while a write is out going in the next', async () => {
  for (const [name, lines] of [
    ['one line', ['a\n']],
    ['a burst of many', Array.from({ length: 5000 }, (_, i) => `{"n":${i},"text":"${'x'.repeat(i % 50)}"}\n`)],
    ['multi-byte text', ['ä€😀\n', 'ok\n']],
  ] as const) {
    await onFile(async (w, text) => {
      for (const line of lines) assert.equal(w.write(line), true);
      await flushed(w);
      assert.equal(text(), lines.join(''), name);
    });
  }
});

test('LineWriter.flushSync writes what is pending at once (what runs on exit)', async () => {
  await onFile(async (w, text) => {
    w.write('first\n');
    // 'first' is out (an asynchronous write); these wait for it, and flushSync writes them now.
    w.write('second\n');
    w.write('third\n');
    w.flushSync();
    await flushed(w);
    const got = text();
    assert.equal(got.length, 'first\nsecond\nthird\n'.length);
    assert.deepEqual(got.split('\n').sort(), ['', 'first', 'second', 'third']);
  });
});

test('pino writes its JSON lines through a LineWriter unchanged', async () => {
  await onFile(async (w, text) => {
    const log = pino({ base: undefined, timestamp: false }, w);
    log.info({ reqId: 'req-1', fast: true }, 'request completed');
    log.warn('two');
    await flushed(w);
    assert.deepEqual(
      text().trim().split('\n').map((l) => JSON.parse(l) as unknown),
      [
        { level: 30, reqId: 'req-1', fast: true, msg: 'request completed' },
        { level: 40, msg: 'two' },
      ],
    );
  });
});
