/** putraw, putmultipart, put4: uploads (MiB/s) and RSS growth during the 1-file ones. */
import { join } from 'node:path';
import { wants, type MetricGroup } from '../lib/options.js';
import { MiB } from '../lib/paths.js';
import { cell, row, type Row, type Target } from '../lib/stats.js';
import { upload, type UploadKind } from '../lib/transfers.js';
import { side, type Context } from './context.js';
import { FLAT_MIB, LARGE_FILE_TARGET } from './downloads.js';

type Up = { group: MetricGroup; id: string; label: string; file: string; size: number; count: number; kind: UploadKind; target: Target; note?: string };

async function up(c: Context, rssRows: Row[], u: Up): Promise<void> {
  if (!wants(c.o, u.group)) return;
  const r = row(u.id, u.label, 'MiB/s', true, u.target, u.note);
  const sample = u.count === 1;
  const growth = row(`${u.id}_rss_growth`, `RSS growth during ${u.label}`, 'MiB', false, { kind: 'fc_at_most', value: FLAT_MIB });
  c.rows.push(r);
  if (sample) rssRows.push(growth);
  for (let i = 0; i < c.o.reps; i++) {
    for (const s of c.servers) {
      // nginx cannot store multipart bodies: its figure is a raw PUT of the same bytes.
      const res = await upload(s, c.data.dir, u.file, u.size, u.count, s === c.fc ? u.kind : 'raw', `${u.id}-${i}`, sample);
      r[side(c, s)].push(res.mibs);
      if (sample) growth[side(c, s)].push(res.rssGrowth);
    }
  }
  c.log(`${u.label}: nginx ${cell(r.ref, 'MiB/s')}, File Cloud ${cell(r.fileCloud, 'MiB/s')}${sample ? `; RSS growth ${cell(growth.fileCloud, 'MiB')} MiB` : ''}`);
}

export async function uploads(c: Context): Promise<void> {
  const { dir, bigSize, midSize } = c.data;
  const bigMiB = Math.round(bigSize / MiB);
  const midMiB = Math.round(midSize / MiB);
  const big = join(dir, 'big.bin');
  const rssRows: Row[] = [];
  await up(c, rssRows, { group: 'putraw', id: 'put_raw', label: `${bigMiB} MiB raw PUT`, file: big, size: bigSize, count: 1, kind: 'raw', target: LARGE_FILE_TARGET });
  await up(c, rssRows, { group: 'putmultipart', id: 'put_multipart', label: `${bigMiB} MiB multipart PUT`, file: big, size: bigSize, count: 1, kind: 'multipart', target: LARGE_FILE_TARGET, note: '[nginx: raw PUT]' });
  await up(c, rssRows, { group: 'put4', id: 'put_parallel', label: `4 × ${midMiB} MiB parallel raw PUTs`, file: join(dir, 'mid.bin'), size: midSize, count: 4, kind: 'raw', target: LARGE_FILE_TARGET });
  c.rows.push(...rssRows);
}
