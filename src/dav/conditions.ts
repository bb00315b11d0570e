import { AppError } from '../domain/errors.js';
import { IfHeaderError, parseIfHeader, submittedTokens } from '../domain/dav-if-header.js';
import type { StorageKey } from '../domain/storage-path.js';
import { destinationOutside, type DavConditions } from '../services/dav.js';
import { parseDestination } from './paths.js';

/** The key a URL of this server's /dav/ names, or undefined when it names none (another server, the top, a bad path). */
function keyOfUri(uri: string, basePath: string): StorageKey | undefined {
  try {
    const t = parseDestination(uri, basePath);
    return t.kind === 'entry' ? t.key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The If header's conditions (RFC 4918 §10.4), with the keys of the resources its tagged lists
 * name by URL; a malformed header is a 400.
 */
export function davConditions(raw: string | undefined, basePath: string): DavConditions {
  if (raw === undefined) return { header: undefined, tokens: new Set(), resources: new Map() };
  try {
    const header = parseIfHeader(raw);
    const resources = new Map<string, StorageKey | undefined>();
    for (const list of header.lists) if (list.resource !== undefined) resources.set(list.resource, keyOfUri(list.resource, basePath));
    return { header, tokens: new Set(submittedTokens(header)), resources };
  } catch (e) {
    if (e instanceof IfHeaderError) throw new AppError('bad_request', `The If header is malformed: ${e.message}`);
    throw e;
  }
}

/** The key a COPY or MOVE's Destination header names (a 400 when missing or malformed, a 403 outside /dav/<user>/). */
export function destinationKey(header: string | undefined, basePath: string): StorageKey {
  const t = parseDestination(header, basePath);
  if (t.kind === 'top') throw destinationOutside();
  return t.key;
}
