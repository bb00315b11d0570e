import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StorageKey } from '../domain/storage-path.js';
import type { StorageEvent } from './events.js';
import { usageDeltas } from './usage-deltas.js';

const k = (user: string, ...segments: string[]): StorageKey => ({ user, segments });

test('usageDeltas turns each storage event into the change of its owner\'s usage', () => {
  const cases: [string, StorageEvent, { user: string; delta: number }[]][] = [
    ['file created', { type: 'created', key: k('a', 'f'), isFile: true, size: 10 }, [{ user: 'a', delta: 10 }]],
    ['empty file created', { type: 'created', key: k('a', 'f'), isFile: true, size: 0 }, []],
    ['folder created empty', { type: 'created', key: k('a', 'd'), isFile: false, size: 0 }, []],
    ['folder copied with its files', { type: 'created', key: k('a', 'd'), isFile: false, size: 300 }, [{ user: 'a', delta: 300 }]],
    ['file replaced by a bigger one', { type: 'replaced', key: k('b', 'f'), size: 50, previousSize: 20 }, [{ user: 'b', delta: 30 }]],
    ['file replaced by a smaller one', { type: 'replaced', key: k('b', 'f'), size: 5, previousSize: 20 }, [{ user: 'b', delta: -15 }]],
    ['file replaced by the same size', { type: 'replaced', key: k('b', 'f'), size: 7, previousSize: 7 }, []],
    ['file deleted', { type: 'deleted', key: k('a', 'f'), isFile: true, size: 10 }, [{ user: 'a', delta: -10 }]],
    ['folder deleted with its files', { type: 'deleted', key: k('a', 'd'), isFile: false, size: 1000 }, [{ user: 'a', delta: -1000 }]],
    ['move onto nothing', { type: 'moved', from: k('a', 'x'), to: k('a', 'y'), isFile: true, replacedSize: 0 }, []],
    ['move over a file', { type: 'moved', from: k('a', 'x'), to: k('a', 'y'), isFile: true, replacedSize: 40 }, [{ user: 'a', delta: -40 }]],
  ];
  for (const [what, event, want] of cases) assert.deepEqual(usageDeltas(event), want, what);
});
