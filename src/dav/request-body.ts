import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { DavXmlError, isEmptyBody, parseXml, type XmlElement } from './xml.js';

/** The largest XML body a WebDAV request may carry (a PROPFIND or PROPPATCH is a few KiB). */
export const MAX_XML_BYTES = 1024 * 1024;

/**
 * Reads a PROPFIND/PROPPATCH/LOCK body: undefined when there is none (or
 * only whitespace), else its root element. Over MAX_XML_BYTES → 413 before
 * the rest is read; not well-formed, or with a DOCTYPE (so no entity is ever
 * expanded) → 400.
 */
export async function readXmlBody(request: FastifyRequest): Promise<XmlElement | undefined> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_XML_BYTES) throw new AppError('too_large', `A WebDAV XML body may be at most ${MAX_XML_BYTES} bytes.`);
  if (declared === 0 && request.headers['transfer-encoding'] === undefined) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > MAX_XML_BYTES) throw new AppError('too_large', `A WebDAV XML body may be at most ${MAX_XML_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (isEmptyBody(text)) return undefined;
  try {
    return parseXml(text);
  } catch (e) {
    if (e instanceof DavXmlError) throw new AppError('bad_request', `The XML body is not acceptable: ${e.message}`);
    throw e;
  }
}
