import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

/**
 * One pino JSON line as a readable line: `12:34:56.789 INFO  message key=value …`.
 * The fields are pino's after redaction, so nothing secret appears here that
 * the JSON format would not show. Nested objects stay compact JSON.
 */
export function formatLogLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 23) : '';
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  const parts = [time, level, typeof rec.msg === 'string' ? rec.msg : ''];
  for (const [k, v] of Object.entries(rec)) {
    if (SKIP.has(k) || v === undefined) continue;
    if (k === 'err' && v && typeof v === 'object' && 'stack' in v) {
      parts.push(`\n    ${String((v as { stack: unknown }).stack).replace(/\n/g, '\n    ')}`);
      continue;
    }
    parts.push(`${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  }
  return parts.filter((p) => p !== '').join(' ');
}

/**
 * A pino destination for `--log-format pretty`: formats each line and
 * writes it to `out` (stdout). Written here rather than adding pino-pretty:
 * twenty lines, no worker thread, no extra dependency to audit.
 */
export function prettyDestination(out: NodeJS.WritableStream = process.stdout): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      pending += chunk.toString();
      let nl;
      let text = '';
      while ((nl = pending.indexOf('\n')) !== -1) {
        text += `${formatLogLine(pending.slice(0, nl))}\n`;
        pending = pending.slice(nl + 1);
      }
      if (text) out.write(text);
      cb();
    },
  });
}
