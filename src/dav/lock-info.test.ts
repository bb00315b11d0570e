import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { parseLockInfo } from './lock-info.js';
import { inBatches, parseXml } from './xml.js';

const body = (inner: string, root = 'D:lockinfo') => parseXml(`<?xml version="1.0"?><${root} xmlns:D="DAV:">${inner}</${root}>`);
const WRITE = '<D:locktype><D:write/></D:locktype>';

test('a DAV:lockinfo gives its scope and its owner as written; anything else is a 400', () => {
  const rows: [string, ReturnType<typeof body>, { scope: string; owner: string } | undefined][] = [
    ['exclusive, no owner', body(`<D:lockscope><D:exclusive/></D:lockscope>${WRITE}`), { scope: 'exclusive', owner: '' }],
    ['shared, with an owner', body(`<D:lockscope><D:shared/></D:lockscope>${WRITE}<D:owner><D:href>mailto:a@b</D:href></D:owner>`), { scope: 'shared', owner: '<D:owner xmlns:D="DAV:"><D:href>mailto:a@b</D:href></D:owner>' }],
    ['no lockscope', body(WRITE), undefined],
    ['an unknown scope', body(`<D:lockscope><D:other/></D:lockscope>${WRITE}`), undefined],
    ['no locktype', body('<D:lockscope><D:exclusive/></D:lockscope>'), undefined],
    ['a locktype that is not write', body('<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:read/></D:locktype>'), undefined],
    ['another root element', body(`<D:lockscope><D:exclusive/></D:lockscope>${WRITE}`, 'D:propfind'), undefined],
  ];
  for (const [name, info, expected] of rows) {
    if (expected) {
      const got = parseLockInfo(info);
      assert.equal(got.scope, expected.scope, name);
      if (expected.owner === '') assert.equal(got.owner, '', name);
      else assert.match(got.owner, /mailto:a@b/, name);
    } else {
      assert.throws(() => parseLockInfo(info), (e: unknown) => e instanceof AppError && e.code === 'bad_request', name);
    }
  }
});

test('inBatches: head, every item in order, tail; pieces of at least the size but the last', async () => {
  async function* pages() {
    yield ['a', 'b', 'c'];
    yield [];
    yield ['d', 'e'];
  }
  const out: string[] = [];
  for await (const piece of inBatches('<', pages(), (s) => s.repeat(3), '>', 4)) out.push(piece);
  assert.equal(out.join(''), '<aaabbbcccdddeee>');
  for (const piece of out.slice(0, -1)) assert.ok(piece.length >= 4, piece);
  assert.deepEqual(out, ['<aaa', 'bbbccc', 'dddeee', '>']);
});
