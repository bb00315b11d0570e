import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUFFER_TRIGGER_MIB, OLD_GROWTH_PERCENT, SEMI_SPACE_MIB, serverExecArgv } from './server-flags.js';

const semi = `--max-semi-space-size=${SEMI_SPACE_MIB}`;
const trigger = `--scavenger-max-new-space-capacity-mb=${BUFFER_TRIGGER_MIB}`;
const growth = `--heap-growing-percent=${OLD_GROWTH_PERCENT}`;

test("a serving process gets the young-generation cap, the dead-buffer trigger and the bound on the old generation's growth, each unless the operator chose one", () => {
  const cases: [string[], string | undefined, string[]][] = [
    [[], undefined, [semi, trigger, growth]],
    [['--enable-source-maps'], '', ['--enable-source-maps', semi, trigger, growth]],
    [['--max-semi-space-size=64'], undefined, ['--max-semi-space-size=64', trigger, growth]],
    [['--max_semi_space_size=8'], undefined, ['--max_semi_space_size=8', trigger, growth]],
    [[], '--max-semi-space-size=4 --trace-warnings', [trigger, growth]],
    [['--scavenger-max-new-space-capacity-mb=8'], undefined, ['--scavenger-max-new-space-capacity-mb=8', semi, growth]],
    [['--heap-growing-percent=100'], undefined, ['--heap-growing-percent=100', semi, trigger]],
    [['--heap_growing_percent=20'], undefined, ['--heap_growing_percent=20', semi, trigger]],
    [['--max-old-space-size=512'], undefined, ['--max-old-space-size=512', semi, trigger, growth]],
    [[semi, trigger, growth], undefined, [semi, trigger, growth]],
  ];
  for (const [argv, env, want] of cases) assert.deepEqual(serverExecArgv(argv, env), want, `${argv} / ${env}`);
});
