/** Where things are, and the units and names every part of the benchmark shares. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MiB = 1024 * 1024;
/** The repository root (this file runs from dist/bench/lib/). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(REPO, 'bin', 'file-cloud.js');
export const SETUP = join(REPO, 'bench', 'setup');
export const RESULTS = join(REPO, 'bench', 'results');
export const SERVICES = join(REPO, 'scripts', 'test-services.sh');
/** The File Cloud user whose storage holds the dataset. */
export const USER = 'admin';

/** A failure of the benchmark itself (a wrong answer, a missing tool): exit 1 with its message, no stack. */
export class BenchError extends Error {}
