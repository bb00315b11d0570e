import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUFFER_TRIGGER_MIB, SEMI_SPACE_MIB, serverExecArgv } from './server-flags.js';

const semi = `--max-semi-space-size=${SEMI_SPACE_MIB}`;
const trigger = `--scavenger-max-new-space-capacity-mb=${BUFFER_TRIGGER_MIB}`;

test('a serving process gets the young-generation cap and the dead-buffer trigger, each unless the operator chose one', () => {
  const cases: [string[], string | undefined, string[]][] = [
    [[], undefined, [semi, trigger]],
    [['--enable-source-maps'], '', ['--enable-source-maps', semi, trigger]],
    [['--max-semi-space-size=64'], undefined, ['--max-semi-space-size=64', trigger]],
    [['--max_semi_space_size=8'], undefined, ['--max_semi_space_size=8', trigger]],
    [[], '--max-semi-space-size=4 --trace-warnings', [trigger]],
    [['--scavenger-max-new-space-capacity-mb=8'], undefined, ['--scavenger-max-new-space-capacity-mb=8', semi]],
    [['--max-old-space-size=512'], undefined, ['--max-old-space-size=512', semi, trigger]],
    [[semi, trigger], undefined, [semi, trigger]],
  ];
  for (const [argv, env, want] of cases) assert.deepEqual(serverExecArgv(argv, env), want, `${argv} / ${env}`);
});
