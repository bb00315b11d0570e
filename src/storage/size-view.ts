/**
 * How a backend reports the size of a file it stores, in what it tells
 * others of its changes: storage events (so usage, quotas, the search index
 * and the change feed), a replace's previous size, copy metering, trash and
 * version sizes. With encryption at rest a stored file is its plaintext plus
 * a header and a tag per chunk, and every figure a user sees is the
 * plaintext's (CONTRACT "Encryption at rest"); the stored size alone cannot
 * tell an encrypted file from a plain one written before the key, so the
 * view may ask for the file's first bytes. The backend counts under the
 * same leases as before, so the figures stay exact under concurrent writers.
 *
 * Entries (stat, list, walk, read) keep the stored size: the layer that
 * decrypts needs it, and shows the plaintext size itself.
 */
export interface SizeView {
  /** How many first bytes of a file `shown` needs (0: never any). */
  readonly headBytes: number;
  /** Whether a file of `stored` bytes needs its first bytes read to be shown. */
  needsHead(stored: number): boolean;
  /** The size shown for a file of `stored` bytes whose first bytes are `head` (undefined: could not be read). */
  shown(stored: number, head: Buffer | undefined): number;
}

/** Sizes as stored: the view of a backend without encryption. */
export const storedSizes: SizeView = { headBytes: 0, needsHead: () => false, shown: (stored) => stored };
