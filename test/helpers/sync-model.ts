// The sides of the seeded model run (test/clients/sync-model.test.ts): two device folders and the
// server folder seen through the API, each with the same few operations, and the seeded random
// source that picks them.
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import assert from 'node:assert/strict';
import { bearer, encodePath, postJson } from './client.js';
import type { Device } from './sync-device.js';

/** mulberry32: a small seeded generator, so a seed replays the same choices. */
export function seeded(seed: number): { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T } {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] as (typeof xs)[number] };
}

/** One side a person writes on: its files (path → content) and the operations on them. */
export interface Side {
  readonly name: string;
  files(): Promise<Map<string, string>>;
  write(path: string, content: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** A file or a whole folder to a new path. */
  move(from: string, to: string): Promise<void>;
}

/** A device's folder, written as a person would (the sync client is not running meanwhile). */
export function deviceSide(d: Device): Side {
  return {
    name: d.name,
    files: async () => new Map(Object.entries(await d.tree())),
    write: async (p, c) => {
      await mkdir(dirname(d.file(p)), { recursive: true });
      await writeFile(d.file(p), c);
    },
    remove: (p) => unlink(d.file(p)),
    move: async (from, to) => {
      await mkdir(dirname(d.file(to)), { recursive: true });
      await rename(d.file(from), d.file(to));
    },
  };
}

/** The server folder /alice/Sync through the HTTP API, as the web UI or another client writes it. */
export function apiSide(url: string, token: string): Side {
  const at = (p: string): string => `${url}/storage/alice/Sync/${encodePath(p)}`;
  return {
    name: 'api',
    files: () => serverFiles(url, token),
    write: async (p, c) => {
      const res = await fetch(at(p), { method: 'PUT', headers: bearer(token), body: c });
      assert.ok([200, 201, 204].includes(res.status), `api PUT ${p}: ${res.status}`);
    },
    remove: async (p) => {
      const res = await fetch(at(p), { method: 'DELETE', headers: bearer(token) });
      assert.equal(res.status, 204, `api DELETE ${p}`);
    },
    move: async (from, to) => {
      const res = await postJson(at(from), { action: 'Move', new_path: `/alice/Sync/${to}` }, bearer(token));
      assert.equal(res.status, 204, `api Move ${from} → ${to}`);
    },
  };
}

/** Every file under /alice/Sync with its content, one listing per folder. */
export async function serverFiles(url: string, token: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    const res = await fetch(`${url}/storage/alice/Sync/${rel === '' ? '' : `${encodePath(rel)}/`}`, { headers: bearer(token) });
    if (res.status === 404) return;
    assert.equal(res.status, 200, `listing ${rel}`);
    for (const e of ((await res.json()) as { entries: { name: string; is_file: boolean }[] }).entries) {
      const p = rel === '' ? e.name : `${rel}/${e.name}`;
      if (!e.is_file) await walk(p);
      else out.set(p, await (await fetch(`${url}/storage/alice/Sync/${encodePath(p)}`, { headers: bearer(token) })).text());
    }
  };
  await walk('');
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The contents of every version the server keeps of the files at `paths` (--versions). */
export async function serverVersionContents(url: string, token: string, paths: Iterable<string>): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const file = `${url}/storage/alice/Sync/${encodePath(p)}`;
    const res = await fetch(`${file}?versions`, { headers: bearer(token) });
    if (res.status !== 200) continue;
    for (const v of ((await res.json()) as { versions: { id: string }[] }).versions) out.push(await (await fetch(`${file}?version=${v.id}`, { headers: bearer(token) })).text());
  }
  return out;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The SHA-256 of each file in alice's server trash (--trash-days) whose hash the server knows. */
export async function serverTrashHashes(url: string, token: string): Promise<Set<string>> {
  const res = await fetch(`${url}/api/trash`, { headers: bearer(token) });
  if (res.status === 404) return new Set();
  assert.equal(res.status, 200, 'the trash listing');
  return new Set(((await res.json()) as { items: { sha256: string | null }[] }).items.flatMap((i) => (i.sha256 === null ? [] : [i.sha256])));
}

/** Download temp files (`.fcsync-….tmp`) left anywhere under `dir`. */
export async function tempFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((p) => /(^|\/)\.fcsync-[^/]*\.tmp$/.test(p));
}

/** The folders that hold the side's files (each with its parents), not the root. */
export function foldersOf(files: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const p of files) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return [...out].sort();
}
