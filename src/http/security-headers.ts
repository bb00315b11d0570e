/**
 * Headers on every answer: no MIME sniffing; and since path tokens travel in
 * URLs, a page never hands its URL to another site as a Referer.
 */
export const EVERY_ANSWER_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;

/** Headers on every storage answer, errors included: an uploaded HTML or SVG file must never run script in our origin. */
export const STORAGE_ANSWER_HEADERS = { 'x-content-type-options': 'nosniff', 'content-security-policy': 'sandbox' } as const;

/** Headers on every answer of a share link (pages and API): a link is private, search engines must not index it. */
export const SHARE_ANSWER_HEADERS = { 'x-robots-tag': 'noindex, nofollow' } as const;

/** Headers on every answer of a share link's machine API (/share/…): as for storage, shared HTML or SVG never runs script. */
export const SHARE_API_HEADERS = { 'content-security-policy': 'sandbox' } as const;
