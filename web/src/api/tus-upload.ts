import { Upload, type DetailedError, type HttpRequest, type PreviousUpload } from 'tus-js-client';
import { withBase } from '../lib/base';
import type { ApiClient } from './client';
import { errorFromResponse, networkError } from './errors';
import { movePath, type Segments } from './paths';
import type { UploadProgress } from './upload';

/** Files at least this big go through /tus/ (resumable); smaller ones stay one multipart PUT. */
export const RESUMABLE_FROM_BYTES = 8 * 1024 * 1024;

/**
 * Bytes per PATCH. Each PATCH has a fixed cost on the server (the closing sync,
 * the lease, the offset recorded), so chunks are big: docs/performance.md,
 * "Resumable uploads (tus)", has the cost and the rate it gives. Between chunks the access
 * token is taken fresh (refreshed when close to expiry), so an upload
 * outlives any token lifetime; a lost connection costs at most what the
 * server had not yet made durable, whatever the chunk size.
 */
const CHUNK_BYTES = 32 * 1024 * 1024;

/** Waits before retrying after a network error or a 5xx (then the upload fails and offers Retry). */
const RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000, 60_000];

export type ResumableUpload = {
  /** Stops sending; the server keeps what it received. */
  pause(): void;
  /** Continues from the server's offset (after pause, or after a failure). */
  resume(): void;
  /** Stops and asks the server to drop the partial upload. */
  cancel(): void;
  /** The final names the server gave the file (a taken name becomes `name (1).ext`). */
  readonly done: Promise<string[]>;
};

/**
 * One file through tus 1.0 (CONTRACT "Resumable uploads") with tus-js-client:
 * chunked PATCHes, retries with backoff, and resume after a page reload —
 * the client remembers each unfinished upload's URL in localStorage under a
 * fingerprint of the file (name, type, size, modification time) and of the
 * signed-in user and target folder, so picking the same file again for the
 * same folder continues where the server stopped.
 */
export function startResumable(
  client: ApiClient,
  user: string,
  folder: Segments,
  file: File,
  opts: { onProgress: (p: UploadProgress) => void; overwrite?: boolean },
): ResumableUpload {
  let finalPath: string | undefined;
  // Set when the server refused the token: the next request refreshes it first.
  let refused: string | undefined;
  let settle!: { resolve: (names: string[]) => void; reject: (e: unknown) => void };
  const done = new Promise<string[]>((resolve, reject) => (settle = { resolve, reject }));

  const upload: Upload = new Upload(file, {
    endpoint: withBase('/tus/'),
    chunkSize: CHUNK_BYTES,
    retryDelays: RETRY_DELAYS_MS,
    metadata: { filename: file.name, folder: movePath(user, folder), filetype: file.type, ...(opts.overwrite ? { overwrite: 'true' } : {}) },
    storeFingerprintForResuming: true,
    removeFingerprintOnSuccess: true,
    fingerprint: (f) => Promise.resolve(fingerprintOf(user, folder, f as File)),
    async onBeforeRequest(req: HttpRequest) {
      const token = refused !== undefined ? (await client.refresh(refused)).token : await client.token();
      refused = undefined;
      req.setHeader('Authorization', `Bearer ${token}`);
    },
    onAfterResponse(_req, res) {
      const path = res.getHeader('File-Cloud-Path');
      if (path) finalPath = path;
    },
    onShouldRetry(err: DetailedError, _attempt, options) {
      const status = err.originalResponse?.getStatus() ?? 0;
      // A 401 between chunks: the token expired or was revoked; the retry refreshes it first.
      if (status === 401) {
        refused = err.originalRequest?.getHeader('Authorization')?.replace(/^Bearer /, '') ?? '';
        return true;
      }
      // The upload expired or was swept: forget it, a retry by the user starts anew.
      if (status === 404 || status === 410) return false;
      // 507 (quota or disk full) stays so until the user frees space: tell them at once.
      return (status === 0 || status === 409 || status === 423 || (status >= 500 && status !== 507)) && !!options.retryDelays;
    },
    onProgress(loaded, total) {
      opts.onProgress({ loaded, total });
    },
    onSuccess() {
      opts.onProgress({ loaded: file.size, total: file.size });
      const name = finalPath?.split('/').pop();
      settle.resolve([name ?? file.name]);
    },
    onError(err) {
      const e = err as DetailedError;
      const res = e.originalResponse;
      if (res && res.getStatus() > 0) settle.reject(errorFromResponse(res.getStatus(), res.getBody() ?? '', res.getHeader('Retry-After') ?? null));
      else settle.reject(networkError());
    },
  });

  const begin = () => {
    upload
      .findPreviousUploads()
      .then((previous: PreviousUpload[]) => {
        const last = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
        if (last) upload.resumeFromPreviousUpload(last);
        upload.start();
      })
      .catch(() => upload.start());
  };
  begin();

  return {
    pause: () => void upload.abort(false),
    resume: () => upload.start(),
    cancel: () => {
      void upload.abort(true).catch(() => undefined);
      settle.reject(new DOMException('Upload cancelled', 'AbortError'));
    },
    done,
  };
}

/** tus-js-client's resume key: the file, and where and for whom it goes (another folder is another upload). */
export const fingerprintOf = (user: string, folder: Segments, f: File): string =>
  ['fc-tus', user, movePath(user, folder), f.name, f.type, f.size, f.lastModified].join('\u0000');
