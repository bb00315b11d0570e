import { AppError } from '../domain/errors.js';
import { DAV_NS } from './props.js';
import { child, serializeElement, type XmlElement } from './xml.js';

/** What a LOCK body (DAV:lockinfo, RFC 4918 §14.11) asks for: the scope, and the owner as the client wrote it. */
export function parseLockInfo(info: XmlElement): { readonly scope: 'exclusive' | 'shared'; readonly owner: string } {
  if (info.ns !== DAV_NS || info.local !== 'lockinfo') throw new AppError('bad_request', 'The LOCK body must be a DAV:lockinfo element.');
  const scopeEl = child(info, DAV_NS, 'lockscope');
  const scope = scopeEl && child(scopeEl, DAV_NS, 'exclusive') ? 'exclusive' : scopeEl && child(scopeEl, DAV_NS, 'shared') ? 'shared' : undefined;
  const typeEl = child(info, DAV_NS, 'locktype');
  if (!scope || !typeEl || !child(typeEl, DAV_NS, 'write')) throw new AppError('bad_request', 'LOCK needs a lockscope (exclusive or shared) and the write locktype.');
  const ownerEl = child(info, DAV_NS, 'owner');
  return { scope, owner: ownerEl ? serializeElement(ownerEl) : '' };
}
