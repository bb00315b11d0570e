import { ListObjectsV2Command, type _Object, type S3Client } from '@aws-sdk/client-s3';
import { waitFree, waitFreeWithin, type Leasing } from '../coordination.js';
import { s3Call } from './client.js';

/**
 * The object keys whose edit leases a change below a folder holds, for the objects listed below
 * it: each file's own key and the keys of the folders between it and the folder (`dir` ends in a
 * slash; its own key is the caller's and not among them).
 */
export function keysBelow(dir: string, objects: readonly _Object[]): string[] {
  const keys = new Set<string>();
  for (const o of objects) {
    const parts = (o.Key ?? '').slice(dir.length).split('/');
    for (let i = 1; i <= parts.length; i++) if (parts[i - 1] !== '') keys.add(dir + parts.slice(0, i).join('/'));
  }
  return [...keys];
}

const alike = (a: readonly _Object[], b: readonly _Object[]): boolean => a.length === b.length && a.every((o, i) => o.Key === b[i]?.Key && o.ETag === b[i]?.ETag && o.Size === b[i]?.Size);

/**
 * The objects below a folder whose edit lease the caller holds, in pages of up to 1,000 (byte
 * order), each page as it is once no change of a name in it is under way (docs/storage.md,
 * "Concurrency below a folder"). A change that starts now steps back for the caller's lease (holdInside); one that
 * began before may still act on a name listed here, and counting that name's bytes as listed would
 * count them twice. So a page is listed, the leases of its names are waited for, and it is listed
 * again, until two listings alike have no lease of theirs held between them: a change acting between
 * them would have held its name's lease across the look (from before the caller's change began until
 * after its act). An empty page is the answer at once: there is nothing in it to count twice.
 * Before the first listing it waits for every edit lease below the folder: a create of a new name
 * holds its own (it is in no listing yet) from before it looks at the folder's until its event, so
 * it has landed, and is listed, or it saw the caller's lease and waits for the change to end.
 * `lease` names an object key's edit lease; `own` are the caller's (a user root's key is `dir` itself).
 * The caller acts on each page (deletes it) before the next.
 */
export async function* quietPages(s3: S3Client, bucket: string, leasing: Leasing, dir: string, lease: (objKey: string) => string, own: readonly string[]): AsyncGenerator<_Object[]> {
  const now = leasing.now ?? Date.now;
  await waitFreeWithin(leasing, lease(dir), own);
  let after: string | undefined;
  for (;;) {
    let seen: _Object[] | undefined;
    let page: _Object[];
    let more: boolean;
    for (;;) {
      const r = await s3Call('Listing objects', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: dir, StartAfter: after })));
      page = r.Contents ?? [];
      more = r.IsTruncated === true && page.length > 0;
      if (page.length === 0 || (seen && alike(seen, page))) break;
      const names = keysBelow(dir, page).map(lease);
      const busy = await leasing.leases.heldOf(names, now());
      if (busy.length > 0) {
        await waitFree(leasing, busy);
        seen = undefined;
      } else seen = page;
    }
    yield page;
    if (!more) return;
    after = page[page.length - 1]?.Key;
  }
}
