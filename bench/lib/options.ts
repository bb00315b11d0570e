/** The command line: `npm run bench -- [options]`. */
import os from 'node:os';
import { resolve } from 'node:path';
import { BIN } from './paths.js';

export type Storage = 'file' | 's3';

export type Options = {
  quick: boolean;
  keep: boolean;
  profile: boolean;
  only: Set<string> | undefined;
  reps: number;
  seconds: number;
  dir: string;
  fcArgs: string[];
  fcBin: string;
  storage: Storage;
  /** --nodes N: N File Cloud nodes behind nginx vs 1 (0: not run). */
  nodes: number;
};

/** Metric groups against nginx on the local disk. */
export const METRICS = ['download1', 'download4', 'get4k', 'listing', 'head', 'pathtoken', 'listscale', 'putraw', 'putmultipart', 'put4'] as const;
/** Metric groups against the AWS SDK on S3 (with --storage s3). */
export const S3_METRICS = ['s3get', 's3put', 's3get4k', 's3listing'] as const;
/** File Cloud alone on the local disk, --workers 1 beside --workers N, N the cores and at least 2 (part of every run; small with --quick). */
export const WORKER_METRICS = ['workers'] as const;
/** File Cloud's WebDAV door beside its HTTP API on the local disk (part of every run; 1 repetition with --quick). */
export const DAV_METRICS = ['dav'] as const;
/** tus resumable uploads beside File Cloud's raw PUT on the local disk (part of every run; 1 repetition with --quick). */
export const TUS_METRICS = ['tus'] as const;
/** A public share link's small GET beside the authenticated one on the local disk (part of every run; 1 repetition with --quick). */
export const SHARE_METRICS = ['share'] as const;
/** A folder zip beside a plain GET of the same size on the local disk (part of every run; 1 repetition with --quick). */
export const ZIP_METRICS = ['zip'] as const;
/** 256 px thumbnails of 12 MP JPEGs beside Debian's vipsthumbnail on the same files (part of every run; 4 files, 1 repetition with --quick). */
export const THUMB_METRICS = ['thumbs'] as const;
/** Name search over a big index and index rebuild, SQLite beside PostgreSQL (part of every run; small with --quick). */
export const SEARCH_METRICS = ['search'] as const;
/** 4 KiB uploads over 8 connections beside rclone serve webdav, and on S3 + PostgreSQL beside the AWS SDK (issue 30; part of every run; 200 files, 1 repetition with --quick). */
export const SMALL_UPLOAD_METRICS = ['smallput', 's3smallput'] as const;
/** The change feed (issue 31): writes with the journal beside --changes off, the feed beside a listing, a change across two nodes (part of every run; small with --quick). */
export const CHANGE_METRICS = ['changes'] as const;
/** SFTP (issue 52): File Cloud beside rclone serve sftp and OpenSSH's sftp-server, one client (part of every run; small with --quick). */
export const SFTP_METRICS = ['sftp'] as const;
/** Encryption at rest (issue 51): File Cloud with --encryption-key-file beside the same without it (part of every run; small with --quick). */
export const ENCRYPTION_METRICS = ['encryption'] as const;
/** The sync client (issue 55): a first sync beside rclone copy, a no-change run beside rclone bisync (part of every run; small with --quick). */
export const SYNC_METRICS = ['sync'] as const;
/** N nodes on S3 + PostgreSQL + Redis behind nginx vs 1 node (with --nodes N only). */
export const NODE_METRICS = ['nodes'] as const;
export type MetricGroup = (typeof METRICS)[number] | (typeof S3_METRICS)[number] | (typeof WORKER_METRICS)[number] | (typeof DAV_METRICS)[number] | (typeof TUS_METRICS)[number] | (typeof SHARE_METRICS)[number] | (typeof ZIP_METRICS)[number] | (typeof THUMB_METRICS)[number] | (typeof SEARCH_METRICS)[number] | (typeof SMALL_UPLOAD_METRICS)[number] | (typeof CHANGE_METRICS)[number] | (typeof SFTP_METRICS)[number] | (typeof ENCRYPTION_METRICS)[number] | (typeof SYNC_METRICS)[number] | (typeof NODE_METRICS)[number];

const USAGE = `usage: npm run bench -- [--quick] [--reps N] [--seconds S] [--only ${[...METRICS, ...WORKER_METRICS, ...DAV_METRICS, ...TUS_METRICS, ...SHARE_METRICS, ...ZIP_METRICS, ...THUMB_METRICS, ...SEARCH_METRICS, ...SMALL_UPLOAD_METRICS, ...CHANGE_METRICS, ...SFTP_METRICS, ...ENCRYPTION_METRICS, ...SYNC_METRICS].join(',')}]
                        [--profile] [--keep] [--dir DIR] [--fc-arg ARG ...] [--storage s3] [--nodes N]
  --quick     a few seconds per metric, 64 MiB / 16 MiB files (the CI smoke test)
  --reps N    repetitions of each metric (default 3; quick 1)
  --seconds S duration of each wrk run (default 10; quick 2)
  --only L    run only these metric groups (comma-separated; with --storage s3 also ${S3_METRICS.join(',')};
              with --nodes also nodes). get4k: 4 KiB GETs of the 1,000 small files (wrk, 64 connections);
              head: HEAD of the same files and HEAD /api/stats (Node client); pathtoken: the 4 KiB GETs with a
              path token per file and no Authorization (nginx: plain GETs); listing: the 10,000-entry folder;
              listscale: File Cloud's listing of 10,000 vs 100,000 entries (20,000 with --quick): time per
              entry and RSS growth. workers: File Cloud --workers 1 beside --workers N (N the cores, at least 2): idle
              RSS, 4 KiB GETs and uploads, the big file, RSS and peak after (1 repetition with --quick);
              dav: WebDAV GET, PUT and PROPFIND beside the HTTP API's GET, PUT and JSON listing;
              tus: the big file over tus in 8 MiB and 64 MiB chunks beside one raw PUT, with RSS growth;
              zip: a folder of 1024 × 1 MiB files (64 with --quick) as a zip beside a plain GET of big.bin, with RSS;
              thumbs: 256 px thumbnails of 20 × 12 MP JPEGs (4 with --quick) beside vipsthumbnail (libvips-tools);
              search: /api/search p50/p99 over 1,000,000 indexed names (20,000 with --quick) and file-cloud index of
              100,000 files (2,000), SQLite beside PostgreSQL (FC_TEST_DATABASE_URL, else test-services.sh starts one);
              smallput: 2,000 × 4 KiB uploads (200 with --quick) over 8 connections (wrk): API raw PUT, multipart PUT of
              100 files per request and WebDAV PUT beside rclone serve webdav's PUT (Debian's rclone), and the
              Node ceiling (a bare node:http server doing only the durable write, with File Cloud's process
              count and with one per core); s3smallput: the same three on
              S3 + PostgreSQL + Redis (started as for --nodes) beside the AWS SDK's PutObjects, 8 at a time, and
              the S3 ceiling (a bare node:http server: the name looked up in PostgreSQL, one conditional
              PutObject, the entry inserted);
              changes: 4 KiB PUTs (8 connections) with --changes on beside off, GET /api/changes of 10,000 entries
              (1,000) beside the listing of that folder, and 100 writes/s on one node seen on another node's
              change stream (two nodes on S3 + PostgreSQL + Redis, started as for --nodes);
              sftp: the big file's get and put, 2,000 × 4 KiB puts (200) and ls -l of the 10,000-entry folder over
              SFTP, File Cloud beside rclone serve sftp and OpenSSH's sftp-server (sshd on a spare port), all
              driven by OpenSSH's sftp -b on the same files, and the small puts beside the ssh2 ceiling (a bare
              server on File Cloud's ssh2, durable and not);
              encryption: File Cloud with --encryption-key-file beside the same without it, each on a data dir
              seeded through its API: the big file's GET and raw PUT with server CPU per GiB, 4 KiB GETs (wrk, 64
              connections), 2,000 × 4 KiB uploads (200; 8 connections), 4 KiB Range GETs at random offsets of the
              big file (wrk, 64 connections); every answer's bytes checked first;
              sync: file-cloud-sync's first sync of 10,000 × 4 KiB files (1,000) beside rclone copy to the WebDAV
              door, and its run with nothing changed over 100,000 files (10,000) beside rclone bisync, with the
              listing requests the server logged and the client's peak RSS
  --profile   run File Cloud with --cpu-prof; profiles go to bench/results/profiles/
  --keep      keep the temporary data dir and dataset
  --dir DIR   where to create the temporary dir (default: the OS temp dir)
  --fc-arg A  extra argument for \`file-cloud serve\` (experiments only, e.g. --log-level=silent)
  --fc-bin F  another build's bin/file-cloud.js (to compare builds, e.g. before/after a change)
  --storage s3  also File Cloud on S3 (radosgw) beside the AWS SDK on the same store: FC_TEST_S3_ENDPOINT,
              FC_TEST_S3_ACCESS_KEY, FC_TEST_S3_SECRET_KEY if set, else scripts/test-services.sh starts one
  --nodes N   also N File Cloud nodes (--workers 1 each) on S3 + PostgreSQL + Redis behind nginx (round robin)
              beside 1 node on the same services (default 2 in a full run, none with --quick; 0 skips it;
              starts radosgw, PostgreSQL and Redis with scripts/test-services.sh unless FC_TEST_S3_*,
              FC_TEST_DATABASE_URL, FC_TEST_REDIS_URL name them)`;

export function parseOptions(argv: string[]): Options {
  const o: Options = { quick: false, keep: false, profile: false, only: undefined, reps: 0, seconds: 0, dir: os.tmpdir(), fcArgs: [], fcBin: BIN, storage: 'file', nodes: 0 };
  let onlyS3 = false;
  let onlyNodes = false;
  let nodesGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v as string;
    };
    switch (flag) {
      case '--quick': o.quick = true; break;
      case '--keep': o.keep = true; break;
      case '--profile': o.profile = true; break;
      case '--reps': o.reps = positive(flag, value()); break;
      case '--seconds': o.seconds = positive(flag, value()); break;
      case '--dir': o.dir = resolve(value()); break;
      case '--fc-arg': o.fcArgs.push(value()); break;
      case '--fc-bin': o.fcBin = resolve(value()); break;
      case '--storage': {
        const s = value();
        if (s !== 's3' && s !== 'file') usage(`--storage must be s3 (or file, the default), not ${s}`);
        o.storage = s as Storage;
        break;
      }
      case '--nodes': {
        const v = value();
        const n = v === '0' ? 0 : positive(flag, v);
        if (n === 1 || n > 8) usage('--nodes must be 0 (none) or from 2 to 8');
        o.nodes = n;
        nodesGiven = true;
        break;
      }
      case '--only': {
        const names = value().split(',').filter(Boolean);
        for (const n of names) {
          if ((S3_METRICS as readonly string[]).includes(n)) onlyS3 = true;
          else if ((NODE_METRICS as readonly string[]).includes(n)) onlyNodes = true;
          else if (![...METRICS, ...WORKER_METRICS, ...DAV_METRICS, ...TUS_METRICS, ...SHARE_METRICS, ...ZIP_METRICS, ...THUMB_METRICS, ...SEARCH_METRICS, ...SMALL_UPLOAD_METRICS, ...CHANGE_METRICS, ...SFTP_METRICS, ...ENCRYPTION_METRICS, ...SYNC_METRICS].includes(n as never)) usage(`unknown metric group ${n}`);
        }
        o.only = new Set(names);
        break;
      }
      case '-h': case '--help': console.log(USAGE); process.exit(0); break;
      default: usage(`unknown option ${a}`);
    }
  }
  if (onlyS3 && o.storage !== 's3') usage('the s3* metric groups need --storage s3');
  // A full run compares 2 nodes with 1 (it starts the services it needs); --quick only when asked.
  if (!nodesGiven && !o.quick) o.nodes = 2;
  if (onlyNodes && o.nodes === 0) usage('the nodes metric group needs --nodes N (a full run has 2; --quick has none)');
  o.reps ||= o.quick ? 1 : 3;
  o.seconds ||= o.quick ? 2 : 10;
  return o;
}

/** Is this metric group part of the run? */
export function wants(o: Options, g: MetricGroup): boolean {
  if ((S3_METRICS as readonly string[]).includes(g) && o.storage !== 's3') return false;
  if ((NODE_METRICS as readonly string[]).includes(g) && o.nodes === 0) return false;
  return !o.only || o.only.has(g);
}

function positive(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) usage(`${flag} must be a whole number from 1 to 1000`);
  return n;
}

function usage(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}
