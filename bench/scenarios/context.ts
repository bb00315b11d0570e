/** What the local-disk scenarios share: the options, the dataset, both servers, the rows and the log. */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Options } from '../lib/options.js';
import type { Server } from '../lib/server.js';
import type { Row } from '../lib/stats.js';

/** The files bench/setup made (big.bin, mid.bin, small/, many/, huge/, tiny.txt). */
export type Dataset = { dir: string; bigSize: number; midSize: number; smallNames: string[]; manyCount: number; hugeCount: number };

export async function readDataset(dir: string): Promise<Dataset> {
  return {
    dir,
    bigSize: (await stat(join(dir, 'big.bin'))).size,
    midSize: (await stat(join(dir, 'mid.bin'))).size,
    smallNames: (await readdir(join(dir, 'small'))).sort(),
    manyCount: (await readdir(join(dir, 'many'))).length,
    hugeCount: (await readdir(join(dir, 'huge'))).length,
  };
}

export type Context = {
  o: Options;
  tmp: string;
  data: Dataset;
  fc: Server;
  ng: Server;
  /** nginx first, then File Cloud: the order every metric alternates in. */
  servers: Server[];
  rows: Row[];
  log(msg: string): void;
};

/** The samples of `s` in a row: File Cloud's or the reference's. */
export const side = (c: Context, s: Server): 'fileCloud' | 'ref' => (s === c.fc ? 'fileCloud' : 'ref');
