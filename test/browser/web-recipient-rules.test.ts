import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/** web/src/lib/recipients.ts, compiled here: the share dialog's suggestions. No browser. */
type Recipient = { kind: 'user' | 'group'; name: string };
type Rules = { suggestRecipients(typed: string, known: Recipient[], already: Set<string>, max?: number): Recipient[]; recipientOf(to: string): Recipient | undefined };

const u = (name: string): Recipient => ({ kind: 'user', name });
const g = (name: string): Recipient => ({ kind: 'group', name });

test('suggestions: known names starting with what is typed, groups first, each once, not the ones already shared with', async () => {
  const { suggestRecipients } = await loadWebModule<Rules>('lib/recipients.ts');
  const known = [u('carl'), g('crew'), u('bea'), u('carl'), g('ops'), u('Cleo')];
  const names = (typed: string, already: string[] = [], max?: number) => suggestRecipients(typed, known, new Set(already), max).map((r) => `${r.kind}:${r.name}`);
  const cases: [string, string[], string[], number | undefined][] = [
    ['c', [], ['group:crew', 'user:carl', 'user:Cleo'], undefined],
    ['C', [], ['group:crew', 'user:carl', 'user:Cleo'], undefined],
    ['', [], ['group:crew', 'group:ops', 'user:bea', 'user:carl', 'user:Cleo'], undefined],
    ['group:', [], ['group:crew', 'group:ops'], undefined],
    ['group:o', [], ['group:ops'], undefined],
    ['user:c', [], ['user:carl', 'user:Cleo'], undefined],
    ['c', ['group:crew'], ['user:carl', 'user:Cleo'], undefined],
    ['c', [], ['group:crew'], 1],
    ['x', [], [], undefined],
  ];
  for (const [typed, already, want, max] of cases) assert.deepEqual(names(typed, already, max), want, `${typed} ${already.join()}`);
});

test('a typed name: "group:" makes a group, anything else a user', async () => {
  const { recipientOf } = await loadWebModule<Rules>('lib/recipients.ts');
  assert.deepEqual(recipientOf('group:team'), g('team'));
  assert.deepEqual(recipientOf(' bea '), u('bea'));
  assert.deepEqual(recipientOf('user:bea'), u('bea'));
  assert.equal(recipientOf('  '), undefined);
  assert.equal(recipientOf('group:'), undefined);
});
