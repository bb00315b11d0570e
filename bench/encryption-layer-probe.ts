/**
 * `node dist/bench/encryption-layer-probe.js [options]`: what the encryption
 * layer (src/storage/encrypted) costs per operation, without HTTP: the local
 * backend alone beside the encryption layer over it, in one process, each on
 * a fresh temporary dir, timed in process CPU time (`process.cpuUsage`, best
 * of the repetitions). The HTTP figures (`npm run bench -- --only encryption`)
 * carry the whole request around this; on a busy machine these are the
 * steadier ones for a change to the layer (docs/performance.md "Encryption at rest").
 *
 *   --only get|range|put|bigget|smallput   one metric (default all five):
 *        get    whole reads of 200 files of 4 KiB, µs per read
 *        range  4 KiB ranges at random offsets of a 64 MiB file, µs per read
 *        put    writes of the 64 MiB file fed in 64 KiB pieces, CPU s per GiB
 *        bigget a whole read of the 64 MiB file, streamed, CPU s per GiB
 *        smallput  writes of new 4 KiB files (one piece each), µs per write
 *   --reps N          repetitions, the best one counts (default 3)
 *   --side plain|encrypted   one side only (e.g. under --cpu-prof)
 *   --before DIR      also another build's dist/src (before a change): its rows are printed after this build's
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { StorageKey } from '../src/domain/storage-path.js';
import type { StorageBackend } from '../src/storage/backend.js';

const MiB = 1024 * 1024;
const BIG = 64 * MiB;
const SMALL = 4096;
const SMALL_FILES = 200;
const GET_READS = 10_000;
const RANGE_READS = 3_000;
const SMALL_WRITES = 1_000;
const METRICS = ['get', 'range', 'put', 'bigget', 'smallput'] as const;
type Metric = (typeof METRICS)[number];

function options(argv: string[]): { only: Metric[]; reps: number; sides: ('plain' | 'encrypted')[]; builds: string[] } {
  const o = { only: [...METRICS] as Metric[], reps: 3, sides: ['plain', 'encrypted'] as ('plain' | 'encrypted')[], builds: [resolve(import.meta.dirname, '../src')] };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? '';
    switch (argv[i]) {
      case '--only': o.only = [value() as Metric]; break;
      case '--reps': o.reps = Number(value()); break;
      case '--side': o.sides = [value() as 'plain' | 'encrypted']; break;
      case '--before': o.builds.push(resolve(value())); break;
      default: throw new Error(`unknown option ${argv[i]}`);
    }
  }
  if (!o.only.every((m) => METRICS.includes(m)) || !(o.reps >= 1)) throw new Error('usage: see the comment at the top of bench/encryption-layer-probe.ts');
  return o;
}

/** The modules of one build (its dist/src), loaded by path so two builds can run side by side. */
async function build(src: string) {
  const load = (p: string) => import(pathToFileURL(join(src, p)).href);
  const [local, encrypted, sqlite, format, path] = await Promise.all([
    load('storage/local/local-backend.js'),
    load('storage/encrypted/encrypted-backend.js'),
    load('store/sqlite.js'),
    load('lib/encryption/format.js'),
    load('domain/storage-path.js'),
  ]);
  const master = format.parseMasterKey(format.newMasterKeyText());
  const keyOf = (p: string): StorageKey => path.parseDecodedStoragePath(`u/${p}`).key;
  return {
    keyOf,
    async open(encrypt: boolean): Promise<{ b: StorageBackend; close(): Promise<void> }> {
      const base = await mkdtemp(join(tmpdir(), 'fc-enc-probe-'));
      const store = await sqlite.openSqliteStore(join(base, 'leases.db'));
      const inner: StorageBackend = local.createLocalBackend({ storageDir: join(base, 'storage'), tmpDir: join(base, 'tmp'), trashDir: join(base, 'trash'), versionsDir: join(base, 'versions') }, { leases: store.leases });
      await inner.init();
      const b: StorageBackend = encrypt ? encrypted.encryptedBackend(inner, { current: master, all: [master], onBadFile: () => undefined }) : inner;
      return { b, close: async () => { await store.close(); await rm(base, { recursive: true, force: true }); } };
    },
  };
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const inPieces = (bytes: Buffer, piece: number) => Readable.from((function* () {
  for (let i = 0; i < bytes.length; i += piece) yield bytes.subarray(i, i + piece);
})(), { objectMode: false });

async function length(o: { bytes?: Buffer; stream: Readable }): Promise<number> {
  if (o.bytes) return o.bytes.length;
  let n = 0;
  for await (const b of o.stream) n += (b as Buffer).length;
  return n;
}

/** The least CPU seconds per unit of `reps` runs of `run` (`per` units each). */
async function best(reps: number, run: () => Promise<void>, per: number): Promise<number> {
  let min = Infinity;
  for (let r = 0; r < reps; r++) {
    const c0 = cpu();
    await run();
    min = Math.min(min, (cpu() - c0) / per);
  }
  return min;
}

async function measure(src: string, encrypt: boolean, only: Metric[], reps: number, big: Buffer): Promise<Record<string, string>> {
  const { keyOf, open } = await build(src);
  const { b, close } = await open(encrypt);
  const got: Record<string, string> = {};
  try {
    const smalls: ReturnType<typeof keyOf>[] = [];
    for (let i = 0; i < SMALL_FILES; i++) {
      smalls.push(keyOf(`small/f${i}`));
      await b.write(smalls[i]!, inPieces(randomBytes(SMALL), SMALL), { ifExists: 'replace' });
    }
    const bigKey = keyOf('big.bin');
    await b.write(bigKey, inPieces(big, 64 * 1024), { ifExists: 'replace' });
    const check = (n: number, want: number) => {
      if (n !== want) throw new Error(`read ${n} bytes, expected ${want}`);
    };
    if (only.includes('get'))
      got.get4kMicros = (1e6 * await best(reps, async () => {
        for (let i = 0; i < GET_READS; i++) check(await length(await b.read(smalls[i % SMALL_FILES]!)), SMALL);
      }, GET_READS)).toFixed(1);
    if (only.includes('range'))
      got.range4kMicros = (1e6 * await best(reps, async () => {
        for (let i = 0; i < RANGE_READS; i++) {
          const start = Math.floor(Math.random() * (BIG - SMALL));
          check(await length(await b.read(bigKey, { start, end: start + SMALL - 1 })), SMALL);
        }
      }, RANGE_READS)).toFixed(1);
    if (only.includes('put')) {
      let r = 0;
      got.putSecondsPerGiB = (await best(reps, async () => void (await b.write(keyOf(`put/${r++}.bin`), inPieces(big, 64 * 1024), { ifExists: 'replace' })), BIG / (1024 * MiB))).toFixed(2);
    }
    if (only.includes('smallput')) {
      const body = randomBytes(SMALL);
      let r = 0;
      got.smallPutMicros = (1e6 * await best(reps, async () => {
        for (let i = 0; i < SMALL_WRITES; i++) await b.write(keyOf(`smallput/${r++}`), inPieces(body, SMALL), { ifExists: 'fail' });
      }, SMALL_WRITES)).toFixed(1);
    }
    if (only.includes('bigget')) got.getSecondsPerGiB = (await best(reps, async () => check(await length(await b.read(bigKey)), BIG), BIG / (1024 * MiB))).toFixed(2);
  } finally {
    await close();
  }
  return got;
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const big = randomBytes(BIG);
  const [load1] = (await import('node:os')).loadavg();
  console.log(`encryption-layer-probe: ${new Date().toISOString()}, load ${load1?.toFixed(1)}, best of ${o.reps}`);
  for (const src of o.builds)
    for (const side of o.sides) console.log(JSON.stringify({ build: src, side, ...(await measure(src, side === 'encrypted', o.only, o.reps, big)) }));
}

await main();
