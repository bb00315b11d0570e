/** What the S3 scenarios share: the store, the bucket, File Cloud on it, the keys, the rows and the log. */
import type { S3Client } from '@aws-sdk/client-s3';
import type { Options } from '../../lib/options.js';
import { USER } from '../../lib/paths.js';
import type { S3Service } from '../../lib/s3-service.js';
import type { Server } from '../../lib/server.js';
import type { Row } from '../../lib/stats.js';
import type { Dataset } from '../context.js';

/** File Cloud's storage prefix in the bench bucket: its files are the objects `fc/<user>/<path>`. */
export const FC_PREFIX = 'fc';
/** Where the direct uploads go (outside File Cloud's prefix). */
export const DIRECT_PREFIX = 'direct';

/** The object key of a dataset path as File Cloud stores it: the direct side reads the very same objects. */
export const fcKey = (rel: string): string => `${FC_PREFIX}/${USER}/${rel}`;

export type S3Context = {
  o: Options;
  tmp: string;
  data: Dataset;
  svc: S3Service;
  s3: S3Client;
  bucket: string;
  /** Objects in many/ (10,000; quick 1,000). */
  manyCount: number;
  /** File Cloud serving `s3://bucket/fc`, logged in. */
  fc: Server;
  rows: Row[];
  log(msg: string): void;
};

/** The reference column's name in the S3 table and its key in the results JSON. */
export const DIRECT = { title: 'direct (AWS SDK)', key: 'direct' };
