import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { MAX_SYNC_NRESULTS, syncLimit } from './sync-limit.js';
import { parseXml } from './xml.js';

const report = (inner: string) => parseXml(`<D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level>${inner}<D:prop><D:getetag/></D:prop></D:sync-collection>`);

test('DAV:limit of a sync-collection REPORT: the number, none, or 400 bad_request', () => {
  const cases: [string, number | undefined | 'bad'][] = [
    ['', undefined],
    ['<D:limit><D:nresults>1</D:nresults></D:limit>', 1],
    ['<D:limit><D:nresults> 100 </D:nresults></D:limit>', 100],
    [`<D:limit><D:nresults>${MAX_SYNC_NRESULTS}</D:nresults></D:limit>`, MAX_SYNC_NRESULTS],
    [`<D:limit><D:nresults>${MAX_SYNC_NRESULTS + 1}</D:nresults></D:limit>`, 'bad'],
    ['<D:limit><D:nresults>0</D:nresults></D:limit>', 'bad'],
    ['<D:limit><D:nresults>-3</D:nresults></D:limit>', 'bad'],
    ['<D:limit><D:nresults>2.5</D:nresults></D:limit>', 'bad'],
    ['<D:limit><D:nresults>1e3</D:nresults></D:limit>', 'bad'],
    ['<D:limit><D:nresults></D:nresults></D:limit>', 'bad'],
    ['<D:limit/>', 'bad'],
    ['<D:limit><Z:nresults xmlns:Z="urn:z">5</Z:nresults></D:limit>', 'bad'],
    ['<Z:limit xmlns:Z="urn:z"><D:nresults>5</D:nresults></Z:limit>', undefined],
  ];
  for (const [inner, want] of cases) {
    if (want === 'bad') {
      assert.throws(() => syncLimit(report(inner)), (e: unknown) => e instanceof AppError && e.code === 'bad_request', inner);
    } else {
      assert.equal(syncLimit(report(inner)), want, inner);
    }
  }
});
