import type { ApiClient } from './client';
import { ApiError, errorFromResponse, networkError } from './errors';
import { storageUrl, type Segments } from './paths';

export type UploadProgress = { loaded: number; total: number };

/**
 * Uploads one file into `folder` as a multipart PUT (CONTRACT "PUT"). The
 * File goes into FormData untouched, so the browser streams it from disk and
 * it is never read into memory here; XMLHttpRequest is used because fetch has
 * no upload progress. The access token is taken fresh for each file, so a
 * long queue outlives many token lifetimes; a 401 refreshes it and retries once.
 * Resolves with the names the server wrote (a taken name becomes `name (1).ext`
 * unless `overwrite`, which replaces it: CONTRACT "PUT").
 */
export async function uploadFile(
  client: ApiClient,
  user: string,
  folder: Segments,
  file: File,
  opts: { signal: AbortSignal; onProgress: (p: UploadProgress) => void; overwrite?: boolean },
): Promise<string[]> {
  const url = storageUrl(user, folder, true) + (opts.overwrite ? '?overwrite=true' : '');
  let token = await client.token();
  try {
    return await send(url, file, token, opts);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
    token = (await client.refresh(token)).token;
    opts.onProgress({ loaded: 0, total: file.size });
    return await send(url, file, token, opts);
  }
}

function send(url: string, file: File, token: string, opts: { signal: AbortSignal; onProgress: (p: UploadProgress) => void }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    if (opts.signal.aborted) return reject(new DOMException('Upload cancelled', 'AbortError'));
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    form.append('file', file, file.name);
    const onAbort = () => xhr.abort();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => opts.signal.removeEventListener('abort', onAbort);

    xhr.open('PUT', url);
    xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => {
      // The multipart body is a little larger than the file; report in file bytes.
      const total = e.lengthComputable && e.total > 0 ? e.total : file.size;
      opts.onProgress({ loaded: Math.min(file.size, Math.round((e.loaded / total) * file.size)), total: file.size });
    };
    xhr.onload = () => {
      done();
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          const body = JSON.parse(xhr.responseText) as { files_written?: unknown };
          const names = Array.isArray(body.files_written) ? body.files_written.filter((n): n is string => typeof n === 'string') : [];
          opts.onProgress({ loaded: file.size, total: file.size });
          resolve(names.length ? names : [file.name]);
        } catch {
          resolve([file.name]);
        }
      } else {
        reject(errorFromResponse(xhr.status, xhr.responseText, xhr.getResponseHeader('retry-after')));
      }
    };
    xhr.onerror = () => {
      done();
      reject(networkError());
    };
    xhr.onabort = () => {
      done();
      reject(new DOMException('Upload cancelled', 'AbortError'));
    };
    xhr.send(form);
  });
}
