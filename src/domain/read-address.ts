/**
 * How a read of one address starts: the one rule for the storage and share-link routes and for the
 * fast read path in front of them (src/app/fast-read.ts), so the two pipelines cannot drift apart.
 * Pure; table-tested in read-address.test.ts.
 */
export type ReadAddress = {
  readonly method: string;
  /** Asks for the bytes only: no Range or conditional header, no thumbnail, zip or versions. */
  readonly plain: boolean;
  /** The address ends with `/`. */
  readonly trailingSlash: boolean;
  /** A share link's own address (`/share/<id>/`), which names the link's item, a file or a folder, with or without a slash. */
  readonly linkItself: boolean;
};

/** Whether a file may answer at the address: a trailing slash addresses a folder, except on a link's own address. */
export const fileMayAnswer = (a: ReadAddress): boolean => !a.trailingSlash || a.linkItself;

/**
 * `open`: a plain GET where a file may answer opens it at once ("read a file or learn it is a folder",
 * one lookup where a look and then an open would be two). `look`: anything else learns first what is
 * at the address (a HEAD, a range, a thumbnail, a zip, a folder's address).
 */
export const firstStep = (a: ReadAddress): 'open' | 'look' => (a.method === 'GET' && a.plain && fileMayAnswer(a) ? 'open' : 'look');
