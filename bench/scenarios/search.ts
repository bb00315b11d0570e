/**
 * search: name search over a big index, and index rebuild, on SQLite and on
 * PostgreSQL (issue 16). The index is filled by the bench directly through
 * the store (1,000,000 names; 20,000 with --quick), not from real files,
 * then File Cloud (--workers 1, no background rescan) answers GET
 * /api/search for a fixed mix of queries, one at a time over one
 * connection: whole words, word beginnings, numbers, broad queries (a file
 * extension, matching a sixth of all names), names that match nothing, and
 * one- and two-character queries (which bypass the trigram index; one of
 * them matches nothing, the worst case: every name is read). p50 and
 * p99 of that mix; target (issue 16): p50 ≤ 50 ms on SQLite.
 *
 * Rebuild: 100,000 empty files (2,000 with --quick) written on the local
 * disk, then `file-cloud index` timed on an empty index and once more on
 * an index that is already up to date.
 *
 * PostgreSQL: the one FC_TEST_DATABASE_URL names (a fresh database on it),
 * else one of our own from scripts/test-services.sh, stopped at the end.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { IndexedEntry } from '../../src/store/search.js';
import type { MetadataStore } from '../../src/store/metadata-store.js';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, BIN, USER } from '../lib/paths.js';
import { startPostgres } from '../lib/s3-service.js';
import { cell, row, type Row } from '../lib/stats.js';
import { prng } from '../../test/kit/prng.js';

export type SearchRun = { rows: Row[]; details: Record<string, unknown> };


const CONSONANTS = 'bcdfghklmnprstvz';
const VOWELS = 'aeiou';
const EXTENSIONS = ['.pdf', '.jpg', '.txt', '.docx', '.png', '.mp4'];

/** 4,000 made-up words of two or three syllables, some capitalized or accented (the index folds both). */
function vocabulary(rand: () => number): string[] {
  const words = new Set<string>();
  const syllable = () => `${CONSONANTS[Math.floor(rand() * CONSONANTS.length)]}${VOWELS[Math.floor(rand() * VOWELS.length)]}`;
  while (words.size < 4000) words.add(Array.from({ length: 2 + Math.floor(rand() * 2) }, syllable).join(''));
  return [...words].map((w, i) => (i % 7 === 0 ? w[0]!.toUpperCase() + w.slice(1) : i % 11 === 0 ? w.replace('e', 'é') : w));
}

/** The i-th name: `<folder>/<folder>/<Word> <word> <i>.<ext>`, 100 × 100 folders. */
function entryOf(i: number, words: string[], rand: () => number): IndexedEntry {
  const w1 = words[Math.floor(rand() * words.length)]!;
  const w2 = words[Math.floor(rand() * words.length)]!;
  const ext = EXTENSIONS[i % EXTENSIONS.length]!;
  return { user: USER, path: `area-${i % 100}/box-${Math.floor(i / 100) % 100}/${w1} ${w2} ${i}${ext}`, isFile: true, size: 1000 + (i % 5000), modified: 1_700_000_000_000 + i };
}

async function fill(store: MetadataStore, count: number): Promise<number> {
  const rand = prng(16);
  const words = vocabulary(prng(1));
  const t0 = performance.now();
  const BATCH = 5000;
  for (let i = 0; i < count; i += BATCH) {
    const batch: IndexedEntry[] = [];
    for (let j = i; j < Math.min(count, i + BATCH); j++) batch.push(entryOf(j, words, rand));
    await store.search.put(batch);
  }
  return (performance.now() - t0) / 1000;
}

type Query = { q: string; kind: 'word' | 'prefix' | 'number' | 'broad' | 'none' | 'short' | 'rare-short' };

function queries(count: number): Query[] {
  const rand = prng(99);
  const words = vocabulary(prng(1)).map((w) => w.toLowerCase());
  const pick = () => words[Math.floor(rand() * words.length)]!;
  const out: Query[] = [];
  for (let i = 0; i < 20; i++) out.push({ q: pick(), kind: 'word' });
  for (let i = 0; i < 10; i++) out.push({ q: pick().slice(0, 3 + (i % 2)), kind: 'prefix' });
  for (let i = 0; i < 6; i++) out.push({ q: String(Math.floor(rand() * count)), kind: 'number' });
  out.push({ q: '.pdf', kind: 'broad' }, { q: 'jpg', kind: 'broad' });
  for (const q of ['qqxz', 'report-2031', 'zzzz', 'xylophone']) out.push({ q, kind: 'none' });
  for (const q of ['ka', 'zu', 'e', '7', 'mo', 'x']) out.push({ q, kind: 'short' });
  // The worst case: too short for trigrams and matching nothing, so every one of the user's names is read.
  out.push({ q: 'qj', kind: 'rare-short' });
  return out;
}

const quantile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
};

/** Times `file-cloud index` on a data dir; seconds. */
function timeIndex(dataDir: string, args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'index', '--data-dir', dataDir, ...args], { encoding: 'utf8', timeout: 3_600_000 });
  if (r.status !== 0) throw new BenchError(`file-cloud index failed (${r.status ?? r.signal}): ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

async function newPgDatabase(base: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name}`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function searchScenario(o: Options, tmp: string, log: (msg: string) => void): Promise<SearchRun> {
  const names = o.quick ? 20_000 : 1_000_000;
  const files = o.quick ? 2_000 : 100_000;
  const rounds = o.quick ? 2 : Math.max(3, o.reps);
  const mix = queries(names);
  const label = `${names.toLocaleString('en-US')} names, ${mix.length} queries × ${rounds}, 1 connection`;
  const p50 = row('search_p50', `search over ${label}, p50 [target on SQLite]`, 'ms', false, { kind: 'fc_at_most', value: 50 });
  const p99 = row('search_p99', `search over ${label}, p99`, 'ms', false);
  const shortP50 = row('search_short_p50', 'search, queries of 1–2 characters only, p50', 'ms', false);
  const rareP50 = row('search_rare_short_p50', 'search, a 2-character query that matches nothing ("qj": every name is read), p50', 'ms', false);
  const broadP50 = row('search_broad_p50', 'search, broad queries (".pdf", "jpg": a sixth of all names) only, p50', 'ms', false);
  const rebuild = row('index_rebuild', `file-cloud index of ${files.toLocaleString('en-US')} files on disk, empty index`, 'ms', false);
  const rescan = row('index_rescan', `file-cloud index of the same ${files.toLocaleString('en-US')} files, index up to date`, 'ms', false);
  const details: Record<string, unknown> = { names, files, queries: mix.map((m) => m.q) };

  // As root, test-services.sh runs PostgreSQL as user postgres, who must be able to reach its directory.
  if (!process.env.FC_TEST_DATABASE_URL && process.getuid?.() === 0) await chmod(tmp, 0o711);
  const pgService = await startPostgres(join(tmp, 'search-services')).catch((e: unknown) => {
    log(`search: no PostgreSQL (${e instanceof Error ? e.message : String(e)}); SQLite only`);
    return undefined;
  });
  try {
    for (const db of ['sqlite', 'postgres'] as const) {
      if (db === 'postgres' && !pgService) continue;
      const side = db === 'sqlite' ? 'fileCloud' : 'ref';
      const dataDir = join(tmp, `search-${db}`, 'data');
      await mkdir(dataDir, { recursive: true });
      const dbArgs = db === 'postgres' ? ['--database', await newPgDatabase(pgService!.databaseUrl, 'fc_bench_search')] : [];
      const store = db === 'postgres' ? await openPostgresStore(dbArgs[1]!) : await openSqliteStore(join(dataDir, 'file-cloud.db'));
      let seconds: number;
      try {
        seconds = await fill(store, names);
      } finally {
        await store.close();
      }
      details[`${db}FillSeconds`] = Math.round(seconds * 10) / 10;
      log(`search ${db}: ${names.toLocaleString('en-US')} names into the index in ${seconds.toFixed(1)} s`);

      const started = await startFileCloud(o, tmp, dataDir, { name: `File Cloud (${db})`, logName: `file-cloud-search-${db}.log`, args: ['--workers', '1', '--index-interval', '0', ...dbArgs] });
      const fc = started.server;
      try {
        await logIn(fc, started.password);
        const ask = async (q: string) => {
          const t0 = performance.now();
          const res = await fetch(`${fc.base}/api/search?${new URLSearchParams({ q })}`, { headers: fc.headers });
          const body = (await res.json()) as { results?: unknown[] };
          const ms = performance.now() - t0;
          if (res.status !== 200 || !Array.isArray(body.results)) throw new BenchError(`search for ${q} answered ${res.status}`);
          return { ms, found: body.results.length };
        };
        for (const m of mix.slice(0, 5)) await ask(m.q); // warm-up
        const all: number[] = [];
        const byKind = new Map<string, number[]>();
        for (let r = 0; r < rounds; r++) {
          for (const m of mix) {
            const { ms, found } = await ask(m.q);
            if ((m.kind === 'word' || m.kind === 'broad') && found === 0) throw new BenchError(`search for "${m.q}" found nothing`);
            if ((m.kind === 'none' || m.kind === 'rare-short') && found !== 0) throw new BenchError(`search for "${m.q}" found ${found}`);
            all.push(ms);
            byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), ms]);
          }
        }
        p50[side].push(quantile(all, 0.5));
        p99[side].push(quantile(all, 0.99));
        shortP50[side].push(quantile(byKind.get('short') ?? [], 0.5));
        broadP50[side].push(quantile(byKind.get('broad') ?? [], 0.5));
        rareP50[side].push(quantile(byKind.get('rare-short') ?? [], 0.5));
        details[`${db}ByKindP50`] = Object.fromEntries([...byKind].map(([k, v]) => [k, Math.round(quantile(v, 0.5) * 100) / 100]));
        log(`search ${db}: p50 ${quantile(all, 0.5).toFixed(2)} ms, p99 ${quantile(all, 0.99).toFixed(2)} ms`);
      } finally {
        await stopFileCloud(fc);
      }

      // Rebuild: a fresh data dir (and database) whose only files are the ones written here.
      const rebuildDir = join(tmp, `search-rebuild-${db}`, 'data');
      const user = join(rebuildDir, 'storage', 'rebuild');
      for (let i = 0; i < files; i += 100) {
        const dir = join(user, `folder-${Math.floor(i / 100)}`);
        await mkdir(dir, { recursive: true });
        await Promise.all(Array.from({ length: Math.min(100, files - i) }, (_, j) => writeFile(join(dir, `file ${i + j}.txt`), '')));
      }
      const rebuildArgs = db === 'postgres' ? ['--database', await newPgDatabase(pgService!.databaseUrl, 'fc_bench_rebuild')] : [];
      const add = spawnSync(process.execPath, [BIN, 'user', 'add', 'rebuild', '--password', 'rebuild-password', '--data-dir', rebuildDir, ...rebuildArgs], { encoding: 'utf8' });
      if (add.status !== 0) throw new BenchError(`user add failed: ${add.stderr}`);
      const cold = timeIndex(rebuildDir, rebuildArgs);
      const warm = timeIndex(rebuildDir, rebuildArgs);
      rebuild[side].push(cold * 1000);
      rescan[side].push(warm * 1000);
      log(`search ${db}: index of ${files} files ${cold.toFixed(1)} s (empty index), ${warm.toFixed(1)} s (up to date)`);
    }
    log(`search: p50 SQLite ${cell(p50.fileCloud, 'ms')} ms, PostgreSQL ${cell(p50.ref, 'ms')} ms`);
    return { rows: [p50, p99, shortP50, broadP50, rareP50, rebuild, rescan], details: { ...details, postgres: pgService ? (pgService.startedHere ? 'started here' : 'FC_TEST_DATABASE_URL') : 'none' } };
  } finally {
    pgService?.stop();
  }
}
