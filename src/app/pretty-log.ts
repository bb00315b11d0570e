import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);
/** What a request line shows in its own words (method, path, status, ms); the rest of it is left out. */
const REQUEST_FIELDS = new Set(['reqId', 'req', 'res', 'responseTime', 'fast']);
/** Objects shown as an indented block of key=value lines rather than one long JSON value. */
const BLOCK_FIELDS = new Set(['config']);
const BLOCK_WIDTH = 100;
const INDENT = '    ';

/** `--log-format auto`: readable lines for a person at a terminal, JSON for anything else (a file, a pipe, a log shipper). */
export function resolveLogFormat(format: 'auto' | 'json' | 'pretty', out: { readonly isTTY?: boolean }): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return out.isTTY === true ? 'pretty' : 'json';
}

const value = (v: unknown): string => (typeof v === 'string' && v !== '' && !/\s/.test(v) ? v : JSON.stringify(v));

type RequestRecord = { req: { method?: unknown; url?: unknown }; res?: { statusCode?: unknown }; responseTime?: unknown };

function isRequest(rec: Record<string, unknown>): rec is Record<string, unknown> & RequestRecord {
  return typeof rec.req === 'object' && rec.req !== null && typeof (rec.req as { method?: unknown }).method === 'string';
}

/** `GET /api/stats 200 1.2 ms`: what a person scans a request log for. */
function requestWords(rec: RequestRecord): string[] {
  const words = [String(rec.req.method), String(rec.req.url ?? '')];
  if (rec.res && typeof rec.res.statusCode === 'number') words.push(String(rec.res.statusCode));
  if (typeof rec.responseTime === 'number') words.push(`${rec.responseTime < 10 ? rec.responseTime.toFixed(1) : Math.round(rec.responseTime)} ms`);
  return words;
}

/** key=value pairs filled into indented lines of about BLOCK_WIDTH columns. */
function block(obj: Record<string, unknown>): string {
  const lines: string[] = [];
  let line = '';
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    const pair = `${k}=${value(v)}`;
    if (line !== '' && INDENT.length + line.length + 1 + pair.length > BLOCK_WIDTH) {
      lines.push(line);
      line = pair;
    } else line = line === '' ? pair : `${line} ${pair}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => `\n${INDENT}${l}`).join('');
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  try {
    const rec: unknown = JSON.parse(line);
    return rec !== null && typeof rec === 'object' && !Array.isArray(rec) ? (rec as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One pino JSON line as a short readable line: `12:34:56.789 INFO  message
 * key=value …`, a request as `12:34:56.789 INFO  GET /path 200 1.2 ms`. The
 * fields are pino's after redaction, so nothing secret appears here that
 * the JSON format would not show. Times are UTC, as in the JSON.
 */
export function formatLogLine(line: string): string {
  const rec = parseRecord(line);
  if (!rec) return line;
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 23) : '';
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  const request = isRequest(rec);
  // A request line's message ("request completed") says nothing its method, path and status do not.
  const parts = [time, level, ...(request ? requestWords(rec) : [typeof rec.msg === 'string' ? rec.msg : ''])];
  // A failed request's id ties its line to the error logged for it.
  if (request && typeof rec.reqId === 'string' && typeof rec.res?.statusCode === 'number' && rec.res.statusCode >= 500) parts.push(`reqId=${rec.reqId}`);
  let tail = '';
  for (const [k, v] of Object.entries(rec)) {
    if (SKIP.has(k) || v === undefined || (request && REQUEST_FIELDS.has(k))) continue;
    if (k === 'err' && v && typeof v === 'object' && 'stack' in v) {
      tail += `\n${INDENT}${String((v as { stack: unknown }).stack).replace(/\n/g, `\n${INDENT}`)}`;
      continue;
    }
    if (BLOCK_FIELDS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) {
      tail += block(v as Record<string, unknown>);
      continue;
    }
    parts.push(`${k}=${value(v)}`);
  }
  return parts.filter((p) => p !== '').join(' ') + tail;
}

/**
 * A pino destination for the pretty format: formats each line and writes
 * it to `out` (stdout). Written here rather than adding pino-pretty: a few
 * lines, no worker thread, no extra dependency to audit.
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
