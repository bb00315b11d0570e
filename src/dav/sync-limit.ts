import { AppError } from '../domain/errors.js';
import { child, type XmlElement } from './xml.js';

const DAV_NS = 'DAV:';
/** The most members a client may ask one sync answer to hold; more is no limit worth sending. */
export const MAX_SYNC_NRESULTS = 100_000;

/**
 * The `DAV:limit` of a sync-collection REPORT (RFC 6578 §3.7, from RFC 5323's
 * grammar): `<D:limit><D:nresults>N</D:nresults></D:limit>`, N a positive
 * whole number; undefined without one.
 */
export function syncLimit(report: XmlElement): number | undefined {
  const limit = child(report, DAV_NS, 'limit');
  if (!limit) return undefined;
  const text = child(limit, DAV_NS, 'nresults')?.text.trim() ?? '';
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < 1 || Number(text) > MAX_SYNC_NRESULTS) {
    throw new AppError('bad_request', `DAV:limit needs DAV:nresults, a whole number from 1 to ${MAX_SYNC_NRESULTS}.`);
  }
  return Number(text);
}
