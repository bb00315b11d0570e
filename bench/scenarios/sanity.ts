/** Before measuring: both servers serve the same dataset, listings are complete, File Cloud wants its token. */
import { expectStatus, request } from '../lib/http.js';
import { BenchError } from '../lib/paths.js';
import type { Context } from './context.js';

export async function checkSanity(c: Context): Promise<void> {
  const { smallNames, manyCount } = c.data;
  for (const s of c.servers) {
    const l = await request(s, 'GET', s.path('many/'));
    expectStatus(s, 'listing', l, [200]);
    const parsed = JSON.parse(l.body) as unknown;
    const n = Array.isArray(parsed) ? parsed.length : (parsed as { entries: unknown[] }).entries.length;
    if (n !== manyCount) throw new BenchError(`${s.name}: listing has ${n} entries, expected ${manyCount}`);
    expectStatus(s, 'HEAD stats', await request(s, 'HEAD', s.statsPath), [200]);
    const f = await request(s, 'GET', s.path(`small/${smallNames[0]}`));
    expectStatus(s, 'GET small', f, [200]);
    if (f.bytes !== 4096) throw new BenchError(`${s.name}: small file has ${f.bytes} bytes`);
  }
  const noAuth = await request({ ...c.fc, headers: {} }, 'HEAD', c.fc.statsPath);
  if (noAuth.status !== 401) throw new BenchError(`File Cloud answered HEAD /api/stats without a token with ${noAuth.status}`);
}
