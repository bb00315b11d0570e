import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startAll } from './start-all.js';

test('startAll: when one start fails, the others are ended (a File Cloud process disposed: stopped and its data dir removed) before the error', async () => {
  const ended: string[] = [];
  const server = { stop: async () => void ended.push('stop'), dispose: async () => void ended.push('dispose') };
  const browser = { close: async () => void ended.push('close') };
  await assert.rejects(startAll(Promise.resolve(server), Promise.reject(new Error('no second node')), Promise.resolve(browser)), /no second node/);
  assert.deepEqual(ended, ['dispose', 'close']);
  const both = await startAll(Promise.resolve(server), Promise.resolve(browser));
  assert.deepEqual(both, [server, browser]);
  assert.equal(ended.length, 2, 'nothing ended when all started');
});
