import { useCallback, useEffect, useRef, useState } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { RESUMABLE_FROM_BYTES, startResumable, type ResumableUpload } from '../api/tus-upload';
import { uploadFile } from '../api/upload';
import type { Picked } from '../lib/drop';
import { announceStorageChange } from '../lib/usage-events';

export type UploadStatus = 'queued' | 'uploading' | 'paused' | 'done' | 'error' | 'cancelled';

export type UploadItem = {
  readonly id: number;
  readonly file: File;
  /** The folder it goes to, from the user's root. */
  readonly folder: readonly string[];
  /** Sent to replace a file of the same name (the user chose Replace). */
  readonly overwrite: boolean;
  status: UploadStatus;
  loaded: number;
  /** The name the server stored it under, when done (differs when the name was taken). */
  finalName?: string;
  error?: string;
  controller?: AbortController;
  /** Set for a big file sent through tus: it can pause and resume. */
  resumable?: ResumableUpload;
};

export type UploadSummary = { total: number; loaded: number; bytes: number; done: number; failed: number; cancelled: number; active: number; speed: number };

const CONCURRENCY = 3;
const SPEED_WINDOW_MS = 3000;

/**
 * The upload queue: a few files at a time, per-file and total progress,
 * speed over the last seconds, cancel and retry. Small files are one streamed
 * multipart PUT each; big ones (RESUMABLE_FROM_BYTES) go through tus, so they
 * pause and resume, survive network loss, and continue after a page reload
 * when the same file is picked again for the same folder.
 * Progress events mutate the items in place and repaint at most once a frame.
 */
export function useUploads(storage: StorageApi, onFolderChanged: (folder: Segments) => void) {
  const items = useRef<UploadItem[]>([]);
  const samples = useRef<{ t: number; bytes: number }[]>([]);
  const nextId = useRef(1);
  const [, setTick] = useState(0);
  const frame = useRef(0);
  const changed = useRef(onFolderChanged);
  changed.current = onFolderChanged;

  const repaint = useCallback(() => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setTick((t) => t + 1);
    });
  }, []);

  const pump = useCallback(() => {
    const list = items.current;
    let active = list.filter((i) => i.status === 'uploading').length;
    for (const item of list) {
      if (active >= CONCURRENCY) break;
      if (item.status !== 'queued') continue;
      active++;
      start(item);
    }
    repaint();

    function start(item: UploadItem) {
      const controller = new AbortController();
      item.status = 'uploading';
      item.controller = controller;
      item.loaded = 0;
      const onProgress = (p: { loaded: number }) => {
        item.loaded = p.loaded;
        repaint();
      };
      let sending: Promise<string[]>;
      if (item.file.size >= RESUMABLE_FROM_BYTES) {
        const resumable = startResumable(storage.client, storage.user, item.folder, item.file, { onProgress, overwrite: item.overwrite });
        item.resumable = resumable;
        controller.signal.addEventListener('abort', () => resumable.cancel(), { once: true });
        sending = resumable.done;
      } else {
        sending = uploadFile(storage.client, storage.user, item.folder, item.file, { signal: controller.signal, onProgress, overwrite: item.overwrite });
      }
      sending.then(
        (names) => {
          item.status = 'done';
          item.loaded = item.file.size;
          item.finalName = names[0];
          changed.current(item.folder);
          // Into whatever folder: the storage figure counts it (the folder on screen may be another).
          announceStorageChange();
        },
        (e: unknown) => {
          if (controller.signal.aborted) item.status = 'cancelled';
          else {
            item.status = 'error';
            item.error = messageOf(e);
          }
          item.loaded = 0;
        },
      ).finally(() => {
        item.controller = undefined;
        item.resumable = undefined;
        pump();
      });
    }
  }, [storage, repaint]);

  /** Queues picked files for `target`; sub-folders of a picked folder are kept below it; those in `replace` overwrite. */
  const add = useCallback(
    async (picked: Picked, target: Segments, replace: ReadonlySet<File> = new Set()) => {
      for (const dir of picked.emptyDirs) {
        await storage.createFolder([...target, ...dir]).catch(() => undefined);
      }
      if (picked.emptyDirs.length) changed.current(target);
      for (const { file, dir } of picked.files) {
        items.current.push({ id: nextId.current++, file, folder: [...target, ...dir], overwrite: replace.has(file), status: 'queued', loaded: 0 });
      }
      pump();
    },
    [storage, pump],
  );

  const cancel = useCallback(
    (id: number) => {
      const item = items.current.find((i) => i.id === id);
      if (!item) return;
      if (item.status === 'queued') item.status = 'cancelled';
      item.controller?.abort();
      repaint();
    },
    [repaint],
  );

  /** Pauses a resumable upload (the server keeps what it received) or continues it. */
  const togglePause = useCallback(
    (id: number) => {
      const item = items.current.find((i) => i.id === id);
      if (!item?.resumable) return;
      if (item.status === 'uploading') {
        item.resumable.pause();
        item.status = 'paused';
      } else if (item.status === 'paused') {
        item.resumable.resume();
        item.status = 'uploading';
      }
      repaint();
    },
    [repaint],
  );

  const cancelAll = useCallback(() => {
    for (const item of items.current) {
      if (item.status === 'queued') item.status = 'cancelled';
      item.controller?.abort();
    }
    repaint();
  }, [repaint]);

  const retry = useCallback(
    (id: number) => {
      const item = items.current.find((i) => i.id === id);
      if (item && (item.status === 'error' || item.status === 'cancelled')) {
        item.status = 'queued';
        item.error = undefined;
        pump();
      }
    },
    [pump],
  );

  const clear = useCallback(() => {
    items.current = items.current.filter((i) => i.status === 'queued' || i.status === 'uploading' || i.status === 'paused');
    samples.current = [];
    repaint();
  }, [repaint]);

  // Warn before leaving the page with uploads in flight (they would be lost).
  const list = items.current;
  const busy = list.some((i) => i.status === 'queued' || i.status === 'uploading' || i.status === 'paused');
  useEffect(() => {
    if (!busy) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [busy]);

  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  return { items: list, summary: summarize(list, samples.current), add, cancel, cancelAll, togglePause, retry, clear };
}

function summarize(list: UploadItem[], samples: { t: number; bytes: number }[]): UploadSummary {
  const s: UploadSummary = { total: 0, loaded: 0, bytes: 0, done: 0, failed: 0, cancelled: 0, active: 0, speed: 0 };
  let moved = 0;
  for (const i of list) {
    if (i.status === 'cancelled') {
      s.cancelled++;
      continue;
    }
    s.total++;
    s.bytes += i.file.size;
    s.loaded += i.status === 'done' ? i.file.size : i.loaded;
    if (i.status === 'done') s.done++;
    if (i.status === 'error') s.failed++;
    if (i.status === 'queued' || i.status === 'uploading' || i.status === 'paused') s.active++;
    moved += i.status === 'done' ? i.file.size : i.loaded;
  }
  // Speed: bytes moved over the last few seconds of samples.
  const now = performance.now();
  const last = samples[samples.length - 1];
  if (!last || now - last.t > 200) samples.push({ t: now, bytes: moved });
  while (samples.length > 2 && now - (samples[0]?.t ?? now) > SPEED_WINDOW_MS) samples.shift();
  const first = samples[0];
  if (first && s.active > 0 && now - first.t > 250) s.speed = Math.max(0, (moved - first.bytes) / ((now - first.t) / 1000));
  return s;
}
