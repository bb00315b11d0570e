import { redactUrl } from '../http/url.js';

/** What the access log's one line for an answer says (build-app.ts's onResponse hook, fast-answer.ts). */
export type AccessFields = {
  readonly reqId: string;
  readonly method: string;
  /** The request's URL as received; the line holds it redacted (redactUrl). */
  readonly url: string;
  /** The client's address (request.ip); without one the line has no remoteAddress, as pino leaves out an undefined field. */
  readonly remoteAddress: string | undefined;
  readonly statusCode: number;
  /** Milliseconds from the request's start to its answer. */
  readonly responseTime: number;
  /** Answered before Fastify (fast-read.ts, fast-write.ts): the line says `"fast":true`. */
  readonly fast: boolean;
};

/** Writes the access line of one answer, when the logger's level lets `info` lines through. */
export type AccessLog = { write(fields: AccessFields): void };

/**
 * The access line's fields, in their order, as the line holds them: the URL redacted (redactUrl),
 * no remoteAddress without an address, `fast` only when true.
 */
export function accessObject(f: AccessFields): Record<string, unknown> {
  const fields: Record<string, unknown> = { reqId: f.reqId, req: { method: f.method, url: redactUrl(f.url), remoteAddress: f.remoteAddress }, res: { statusCode: f.statusCode }, responseTime: f.responseTime };
  if (f.fast) fields.fast = true;
  return fields;
}

/** pino's text of its `base` fields (`,"pid":…,"hostname":"…"`), which it puts after level and time on every line. */
export function baseText(base: Readonly<Record<string, unknown>>): string {
  let text = '';
  for (const [key, value] of Object.entries(base)) if (value !== undefined) text += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return text;
}

/**
 * The access line exactly as pino writes `info` of the same fields for a logger made by logger.ts
 * (a test holds the two byte for byte): level, time, the base fields, accessObject's fields, the
 * message. Rendered here because pino's general path (every field looked up among the
 * serializers, the nested objects stringified one by one) was the largest single cost left on a
 * small GET (docs/performance.md, "The access line written without pino's general path"). Written
 * out rather than as one `JSON.stringify(accessObject(f))`, which costs half as much again.
 */
export function accessLine(time: number, base: string, f: AccessFields): string {
  const req = JSON.stringify({ method: f.method, url: redactUrl(f.url), remoteAddress: f.remoteAddress });
  const fast = f.fast ? ',"fast":true' : '';
  return `{"level":30,"time":${time}${base},"reqId":${JSON.stringify(f.reqId)},"req":${req},"res":{"statusCode":${f.statusCode}},"responseTime":${Number.isFinite(f.responseTime) ? f.responseTime : null}${fast},"msg":"request completed"}\n`;
}
