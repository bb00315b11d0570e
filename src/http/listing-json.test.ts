import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ListedEntry } from '../storage/backend.js';
import { entryJson, listingChunks, listingStream } from './listing-json.js';

const when = new Date(Date.UTC(2026, 10, 25, 4, 5, 6, 789));
const file = (name: string, size = 3, modified = when): ListedEntry => ({ name, isFile: true, size, modified });
const folder = (name: string): ListedEntry => ({ name, isFile: false, size: 4096, modified: when });

/** What the route answered before it streamed: one JSON.stringify of the mapped entries. */
const reference = (entries: readonly ListedEntry[]) =>
  JSON.stringify({ entries: entries.map((e) => ({ is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString() })) });

async function* pagesOf(entries: readonly ListedEntry[], pageSize: number): AsyncGenerator<ListedEntry[]> {
  for (let i = 0; i < entries.length; i += pageSize) yield entries.slice(i, i + pageSize);
}

const streamed = async (entries: readonly ListedEntry[], pageSize = 2, chunkChars?: number) => {
  const chunks: string[] = [];
  for await (const c of listingChunks(pagesOf(entries, pageSize), chunkChars)) chunks.push(c);
  return chunks;
};

test('entryJson is JSON.stringify of the mapped entry, escaping included', () => {
  const names: [string, string][] = [
    ['plain', 'a.txt'],
    ['quote', 'say "hi".txt'],
    ['backslash (planted on disk)', 'back\\slash'],
    ['control characters', 'tab\there\nnew\rline\u0001\u001f\u007f'],
    ['line and paragraph separators', 'a\u2028b\u2029c'],
    ['lone high surrogate', 'x\ud800y'],
    ['lone low surrogate', 'x\udc00'],
    ['astral (a pair)', '😀.txt'],
    ['BMP private use and specials', '\ue000\uffee\ufffd'],
    ['HTML-looking', '</script><b>&amp;'],
    ['accents and case', 'Éé.TXT'],
    ['JSON-looking', '{"entries":[]}'],
  ];
  for (const [why, name] of names) {
    for (const e of [file(name), folder(name)]) {
      assert.equal(entryJson(e), JSON.stringify({ is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString() }), why);
    }
  }
});

test('entryJson writes sizes and dates as JSON.stringify does', () => {
  const rows: ListedEntry[] = [
    file('zero', 0),
    file('big', Number.MAX_SAFE_INTEGER),
    file('epoch', 1, new Date(0)),
    file('before 1970', 1, new Date(-1)),
    file('far future', 1, new Date(Date.UTC(12000, 0, 1))),
  ];
  for (const e of rows) assert.equal(entryJson(e), JSON.stringify({ is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString() }), e.name);
});

test('listingChunks joins to the bytes of JSON.stringify({ entries }) for any paging', async () => {
  const many = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? folder(`d${i}"\u2028`) : file(`f${i}\\ü`, i)));
  const cases: [string, ListedEntry[], number][] = [
    ['empty', [], 1],
    ['one', [file('a')], 1],
    ['two pages', [folder('a'), folder('b'), file('c')], 2],
    ['many pages', many, 7],
    ['one page', many, 1000],
  ];
  for (const [why, entries, pageSize] of cases) {
    assert.equal((await streamed(entries, pageSize)).join(''), reference(entries), why);
  }
  // Empty pages (a page whose entries were all omitted) change nothing.
  async function* withEmpty() {
    yield [];
    yield [file('a')];
    yield [];
    yield [file('b')];
    yield [];
  }
  let text = '';
  for await (const c of listingChunks(withEmpty())) text += c;
  assert.equal(text, reference([file('a'), file('b')]));
});

test('listingChunks cuts the answer into chunks of about chunkChars, never one per entry', async () => {
  const entries = Array.from({ length: 2000 }, (_, i) => file(`name-${i}.bin`, i));
  const chunks = await streamed(entries, 128, 4096);
  assert.equal(chunks.join(''), reference(entries));
  assert.ok(chunks.length > 10, `${chunks.length} chunks`);
  // Every chunk but the last is at least chunkChars and at most one entry more.
  for (const c of chunks.slice(0, -1)) assert.ok(c.length >= 4096 && c.length < 4096 + 200, `a chunk of ${c.length}`);
});

test('listingStream gives the UTF-8 bytes, and a failing page errors the stream after what was sent', async () => {
  const entries = [folder('é'), file('😀'), file('x\u2028')];
  const bytes: Buffer[] = [];
  for await (const b of listingStream(pagesOf(entries, 1))) bytes.push(b as Buffer);
  assert.equal(Buffer.concat(bytes).toString('utf8'), reference(entries));
  assert.deepEqual(Buffer.concat(bytes), Buffer.from(reference(entries), 'utf8'));

  async function* failing() {
    yield Array.from({ length: 1000 }, (_, i) => file(`f${i}`));
    throw new Error('the disk went away');
  }
  let got = '';
  await assert.rejects(
    (async () => {
      for await (const b of listingStream(failing())) got += (b as Buffer).toString('utf8');
    })(),
    /the disk went away/,
  );
  assert.ok(!got.endsWith(']}'), 'no closing bracket after a failure: the answer is not valid JSON');
});
