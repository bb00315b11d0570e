import type { Entry } from '../storage/backend.js';
import { contentDisposition } from './content-disposition.js';
import { contentTypeFor } from '../lib/mime.js';
import { reprDigest } from './digest.js';

/** The headers of a file's answer (GET, HEAD, 206, 304) from its entry; the attachment name when `download`. */
export function fileHeaderFields(entry: Entry, download: boolean): Record<string, string> {
  const fields: Record<string, string> = {
    'content-type': contentTypeFor(entry.name),
    etag: entry.etag,
    'last-modified': entry.modified.toUTCString(),
    'accept-ranges': 'bytes',
    'cache-control': 'private, no-cache',
  };
  if (download) fields['content-disposition'] = contentDisposition(entry.name);
  // RFC 9530: the SHA-256 of the whole file, where the server knows it for exactly these bytes.
  if (entry.sha256 !== undefined) fields['repr-digest'] = reprDigest(entry.sha256);
  return fields;
}
