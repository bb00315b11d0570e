import { runSoak } from './soak.js';

/**
 * `npm run soak [-- --duration SECONDS | --minutes M] [--concurrency N] [--json]`:
 * the bounded soak against the real binary on loopback (default 120 s, 64
 * connections; `--minutes 10` for the 10-minute soak whose memory slope is
 * judged). Exit code 0 when it passes, 1 when it does not, 2 for a bad option.
 */
function option(name: string, fallback: number, max: number): number {
  const i = process.argv.indexOf(name);
  if (i === -1) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1 || v > max) {
    console.error(`soak: ${name} needs a whole number from 1 to ${max}`);
    process.exit(2);
  }
  return v;
}

if (process.argv.includes('--duration') && process.argv.includes('--minutes')) {
  console.error('soak: give --duration or --minutes, not both');
  process.exit(2);
}
const durationMs = (process.argv.includes('--minutes') ? option('--minutes', 10, 60) * 60 : option('--duration', 120, 3600)) * 1000;
const concurrency = option('--concurrency', 64, 1024);
const json = process.argv.includes('--json');
const report = await runSoak({ durationMs, concurrency, log: json ? () => {} : undefined });
if (json) console.log(JSON.stringify(report, null, 2));
process.exit(report.ok ? 0 : 1);
