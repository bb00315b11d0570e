import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import { accessLine, accessObject, baseText, type AccessLog } from './access-line.js';
import { LineWriter } from './log-destination.js';
import { prettyDestination } from './pretty-log.js';
import { redactUrl } from '../http/url.js';

/**
 * The process logger. Request logs carry a redacted URL (path-token query
 * values) and no headers; body fields with secrets are censored wherever
 * they would appear.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, format: 'json' | 'pretty' = 'json'): Logger {
  // pino's own default, given here so that the access lines (accessLogOf) carry the same fields.
  const base = { pid: process.pid, hostname: hostname() };
  const options = {
    level,
    base,
    redact: {
      paths: ['password', 'refresh_token', 'access_token', 'token', '*.password', '*.refresh_token', '*.access_token', '*.token', 'req.headers.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
  const out = (format === 'pretty' ? prettyDestination(destination ?? process.stdout) : (destination ?? stdoutWriter())) as unknown as pino.DestinationStream;
  const logger = pino(options, out);
  const bindings = baseText(base);
  accessLogs.set(logger, {
    write(fields) {
      if (logger.isLevelEnabled('info')) out.write(accessLine(Date.now(), bindings, fields));
    },
  });
  return logger;
}

/** The access log of each logger made by createLogger: its lines rendered by access-line.ts, into the logger's destination. */
const accessLogs = new WeakMap<Logger, AccessLog>();

/**
 * The access log for `logger`'s lines: for a logger made by createLogger, the same line pino would
 * write, rendered without pino's general path (access-line.ts); for any other, pino's own `info` of
 * the same fields, already redacted (that logger may have none of createLogger's serializers).
 */
export function accessLogOf(logger: Logger): AccessLog {
  return accessLogs.get(logger) ?? { write: (fields) => logger.info(accessObject(fields), 'request completed') };
}

let stdout: LineWriter | undefined;
/** One writer for stdout in a process (every logger made without a destination shares it), its lines written out before the process exits. */
function stdoutWriter(): LineWriter {
  if (stdout) return stdout;
  const writer = (stdout = new LineWriter(1));
  process.once('exit', () => writer.flushSync());
  return writer;
}
