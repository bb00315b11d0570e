/** The ceiling index's thread (openCeilingIndexThread in ceiling-index.ts): one transaction a message, its id back. */
import { parentPort, workerData } from 'node:worker_threads';
import { openCeilingIndex } from './ceiling-index.js';

const put = openCeilingIndex((workerData as { file: string }).file);
parentPort?.on('message', (m: { n: number; user: string; path: string; size: number }) => {
  try {
    parentPort?.postMessage({ n: m.n, id: put(m.user, m.path, m.size) });
  } catch (e) {
    parentPort?.postMessage({ n: m.n, error: e instanceof Error ? e.message : String(e) });
  }
});
