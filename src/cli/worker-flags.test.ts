import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEMI_SPACE_MIB, workerExecArgv } from './worker-flags.js';

const cap = `--max-semi-space-size=${SEMI_SPACE_MIB}`;

test('workers get the young-generation cap unless the operator chose one', () => {
  const cases: [string[], string | undefined, string[]][] = [
    [[], undefined, [cap]],
    [['--enable-source-maps'], '', ['--enable-source-maps', cap]],
    [['--max-semi-space-size=64'], undefined, ['--max-semi-space-size=64']],
    [['--max_semi_space_size=8'], undefined, ['--max_semi_space_size=8']],
    [[], '--max-semi-space-size=4 --trace-warnings', []],
    [['--max-old-space-size=512'], undefined, ['--max-old-space-size=512', cap]],
  ];
  for (const [argv, env, want] of cases) assert.deepEqual(workerExecArgv(argv, env), want, `${argv} / ${env}`);
});
