/**
 * Where File Cloud's objects live: `--storage s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true`
 * (CONTRACT "Backends and nodes"). Credentials are never part of the URL:
 * they come from the AWS standard chain (environment, profile, instance role).
 */
export type S3Location = {
  readonly bucket: string;
  /** '' or a prefix ending in '/': every key File Cloud reads or writes starts with it. */
  readonly prefix: string;
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly pathStyle: boolean;
};

export class S3LocationError extends Error {}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseS3Url(raw: string): S3Location {
  // URL parsing would resolve `..` away; a prefix with one is a mistake to report, not to fix.
  if (/\/\.\.?(\/|\?|$)/.test(raw.replace(/^s3:\/\//, '').split('?')[0] ?? '')) throw new S3LocationError('the prefix cannot contain "." or ".." segments');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new S3LocationError(`expected s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=true], got "${raw}"`);
  }
  if (url.protocol !== 's3:') throw new S3LocationError(`expected an s3:// URL, got "${raw}"`);
  if (url.username || url.password) throw new S3LocationError('credentials do not belong in the storage URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile)');
  const bucket = url.hostname;
  if (!BUCKET.test(bucket)) throw new S3LocationError(`"${bucket}" is not a valid bucket name (3–63 of a-z 0-9 . -)`);
  const segments = decodeURIComponent(url.pathname).split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '.' || s === '..')) throw new S3LocationError('the prefix cannot contain "." or ".." segments');
  const prefix = segments.length ? `${segments.join('/')}/` : '';
  const known = new Set(['endpoint', 'region', 'path_style']);
  for (const k of url.searchParams.keys()) if (!known.has(k)) throw new S3LocationError(`unknown storage URL parameter "${k}" (known: endpoint, region, path_style)`);
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]+/.test(endpoint)) throw new S3LocationError(`endpoint must be an http:// or https:// URL, got "${endpoint}"`);
  const style = (url.searchParams.get('path_style') ?? 'false').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(style)) throw new S3LocationError(`path_style must be true or false, got "${style}"`);
  return { bucket, prefix, endpoint, region: url.searchParams.get('region') ?? 'us-east-1', pathStyle: style === 'true' || style === '1' };
}
