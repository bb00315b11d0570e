import { diskPath, rescanPaths, scanFolder, type LocalScan } from './local-scan.js';
import type { Op } from './planner.js';
import type { BaseRecord } from './tree.js';

/**
 * The local tree kept between rounds of continuous mode. A full stat pass of the folder runs at the
 * start and then every `statPassMs` (for what a watcher misses: an overflowed queue, a change while
 * it was down); between them only the paths the watcher reported, and those the client's own steps
 * touched, are stat'ed again — a round costs what changed, not the folder's size.
 */
export class LocalView {
  private scan: LocalScan | undefined;
  private readonly dirty = new Set<string>();
  private lastPass = 0;
  /** Full stat passes so far. */
  passes = 0;

  constructor(
    private readonly statPassMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** A path (on disk, relative to the root) changed. */
  changed(path: string): void {
    this.dirty.add(path);
  }

  /** Nothing the view holds can be trusted (the watcher failed or is missing): the next refresh is a stat pass. */
  invalidate(): void {
    this.scan = undefined;
  }

  /** The paths a plan's steps wrote, so the next refresh sees their result without waiting for the watcher. */
  touched(ops: readonly Op[]): void {
    const names = this.scan?.names ?? new Map<string, string>();
    for (const op of ops) for (const p of 'path' in op ? [op.path, ...(op.kind === 'conflict' ? [op.copy] : [])] : [op.from, op.to]) this.dirty.add(diskPath(names, p));
  }

  async refresh(root: string, base: ReadonlyMap<string, BaseRecord>, now = Date.now()): Promise<LocalScan> {
    if (this.scan === undefined || now - this.lastPass >= this.statPassMs) {
      this.dirty.clear();
      this.scan = await scanFolder(root, base);
      this.lastPass = now;
      this.passes++;
      this.log(`stat pass ${this.passes}: ${this.scan.files.size} files, ${this.scan.dirs.size} folders`);
      return this.scan;
    }
    const paths = [...this.dirty];
    this.dirty.clear();
    await rescanPaths(this.scan, root, base, paths);
    return this.scan;
  }
}
