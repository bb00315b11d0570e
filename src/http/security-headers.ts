import { randomBytes } from 'node:crypto';

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

/**
 * Our pages name their own scripts and style sheets by a nonce, fresh for
 * every answer, and the page's CSP allows only those: so no URL of our
 * origin that serves user bytes (/storage/, /share/, /dav/) can be loaded
 * as a script or style sheet by one of our pages, even if some bug let a
 * user's text into a page as markup (docs/security.md, "User bytes never
 * run as our code").
 *
 * Templates write NONCE_SLOT where the nonce goes; the answer's nonce
 * replaces it on the way out (withNonce). The slot is random per process
 * and never leaves it (every answer replaces it), so text a user controls
 * can never carry it: markup that reaches a page by mistake gets no nonce.
 */
export const NONCE_SLOT = `nonce-slot-${randomBytes(18).toString('hex')}`;

/** A fresh nonce: 128 bits from the system's CSPRNG, base64 (as CSP wants it). */
export const newNonce = (): string => randomBytes(16).toString('base64');

/** The page with every NONCE_SLOT replaced by the answer's nonce. */
export const withNonce = (page: string, nonce: string): string => page.replaceAll(NONCE_SLOT, nonce);
