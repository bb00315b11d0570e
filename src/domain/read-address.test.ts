import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileMayAnswer, firstStep, type ReadAddress } from './read-address.js';

// [what, the address, may a file answer there, the first step]
const CASES: [string, ReadAddress, boolean, 'open' | 'look'][] = [
  ['a plain GET of a path', { method: 'GET', plain: true, trailingSlash: false, linkItself: false }, true, 'open'],
  ['a plain HEAD of a path', { method: 'HEAD', plain: true, trailingSlash: false, linkItself: false }, true, 'look'],
  ['a GET of a range (or a thumbnail, a zip)', { method: 'GET', plain: false, trailingSlash: false, linkItself: false }, true, 'look'],
  ['a plain GET of a path with a slash', { method: 'GET', plain: true, trailingSlash: true, linkItself: false }, false, 'look'],
  ['a HEAD of a path with a slash', { method: 'HEAD', plain: true, trailingSlash: true, linkItself: false }, false, 'look'],
  ["a plain GET of a link's own address (a file share's, slash or not)", { method: 'GET', plain: true, trailingSlash: true, linkItself: true }, true, 'open'],
  ["a HEAD of a link's own address", { method: 'HEAD', plain: true, trailingSlash: true, linkItself: true }, true, 'look'],
  ['a plain GET below a link, without a slash', { method: 'GET', plain: true, trailingSlash: false, linkItself: false }, true, 'open'],
  ['a plain GET below a link, with a slash', { method: 'GET', plain: true, trailingSlash: true, linkItself: false }, false, 'look'],
  ['a PUT', { method: 'PUT', plain: true, trailingSlash: false, linkItself: false }, true, 'look'],
];

for (const [what, address, file, step] of CASES) {
  test(`${what}: a file ${file ? 'may answer' : 'never answers'}, ${step} first`, () => {
    assert.equal(fileMayAnswer(address), file);
    assert.equal(firstStep(address), step);
  });
}
