import { randomBytes } from 'node:crypto';
import { lstat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TEMP_PREFIX, type LocalScan } from './local-scan.js';
import { isUnder, type FileVersion } from './tree.js';

/** Two names a case-insensitive file system (macOS, Windows) holds as one. */
export const foldCase = (path: string): string => path.normalize('NFC').toLowerCase();

/** Whether the local folder's file system takes names that differ only in case for one name. */
export async function isCaseInsensitive(root: string): Promise<boolean> {
  const name = `${TEMP_PREFIX}${randomBytes(6).toString('hex')}case.tmp`;
  await writeFile(join(root, name), '', { flag: 'wx' });
  try {
    return (await lstat(join(root, name.toUpperCase())).catch(() => undefined)) !== undefined;
  } finally {
    await unlink(join(root, name)).catch(() => undefined);
  }
}

export interface CaseView {
  /** The server's tree without the names this disk cannot hold beside another. */
  readonly remote: Map<string, FileVersion>;
  readonly remoteDirs: Set<string>;
  /** The scan with each local name under the spelling the server (or the base) uses for it. */
  readonly local: LocalScan;
  /** The server's names left out, and why. */
  readonly skipped: string[];
}

/**
 * For a case-insensitive disk. Server names that differ only in case cannot both live here: the
 * one this disk already holds (or the base knows, or else the first in code-point order) is synced,
 * the others are left alone on the server — never downloaded over the kept one, never deleted —
 * and named in `skipped`. A local name spelled otherwise than the server's same name is taken as
 * that name, unless the base synced it under the server's spelling: then it was renamed here (a
 * case-only rename), and stays as it is so the plan moves it on the server. Pure: nothing is read or written.
 */
export function caseView(local: LocalScan, remote: ReadonlyMap<string, FileVersion>, remoteDirs: ReadonlySet<string>, base: ReadonlyMap<string, unknown>, baseDirs: ReadonlySet<string>): CaseView {
  const spellings = new Map<string, string[]>();
  for (const p of [...remote.keys(), ...remoteDirs]) spellings.set(foldCase(p), [...(spellings.get(foldCase(p)) ?? []), p]);
  const here = (p: string): boolean => local.files.has(p) || local.dirs.has(p);
  const known = (p: string): boolean => base.has(p) || baseDirs.has(p);
  const left: string[] = [];
  const skipped: string[] = [];
  for (const names of spellings.values()) {
    if (names.length < 2) continue;
    const sorted = [...names].sort();
    const keep = sorted.find(here) ?? sorted.find(known) ?? sorted[0]!;
    for (const n of sorted) {
      if (n === keep) continue;
      left.push(n);
      skipped.push(`${n}: not synced, this disk does not tell it apart from ${keep} (names differing only in case); rename one on the server`);
    }
  }
  const isLeft = (p: string): boolean => left.some((l) => isUnder(p, l));
  const view = {
    remote: new Map([...remote].filter(([p]) => left.length === 0 || !isLeft(p))),
    remoteDirs: new Set([...remoteDirs].filter((p) => left.length === 0 || !isLeft(p))),
  };

  const serverSpelling = new Map<string, string>();
  for (const p of [...view.remote.keys(), ...view.remoteDirs, ...base.keys(), ...baseDirs]) if (!serverSpelling.has(foldCase(p))) serverSpelling.set(foldCase(p), p);
  const onServer = (p: string): boolean => view.remote.has(p) || view.remoteDirs.has(p);
  const spelled = (p: string): string => {
    if (onServer(p) || known(p)) return p;
    const theirs = serverSpelling.get(foldCase(p));
    // Synced under `theirs`, still so on the server, spelled `p` here now: renamed here, case only.
    // It keeps this spelling, and the plan sends the rename up (the server tells the names apart).
    if (theirs !== undefined && known(theirs) && onServer(theirs) && !here(theirs)) return p;
    return theirs ?? p;
  };
  const aligned: LocalScan = { files: new Map(), dirs: new Set(), names: new Map(local.names), skipped: local.skipped };
  for (const [p, f] of local.files) aligned.files.set(rename(p), f);
  for (const p of local.dirs) aligned.dirs.add(rename(p));
  function rename(p: string): string {
    // Folder by folder, so a file in a folder spelled otherwise lands in the server's folder.
    let to = '';
    for (const seg of p.split('/')) to = spelled(to === '' ? seg : `${to}/${seg}`);
    if (to !== p) aligned.names.set(to, local.names.get(p) ?? p);
    return to;
  }
  return { ...view, local: aligned, skipped };
}
