/** A row of the index as the journal compares it: what it held, or what a put brings. */
export type Figures = { readonly isFile: boolean; readonly size: number; readonly modified: number; readonly etag?: string | null | undefined };

/**
 * The change-journal entry a put of `now` over the row `was` makes (CONTRACT
 * "Changes"): none before → `created`, as a change of kind too; a file with
 * other figures (size, time, a known ETag) → `modified`; otherwise none (a
 * folder's own time moves with every entry added to it: not a change of its
 * own). `walked`: the put is a rescan's sighting, not a write's report, and a
 * file it finds with the same size and ETag has the same bytes, whatever its
 * time: only the row's time is corrected. An S3 write's entry takes its time
 * from the PutObject answer, which can be a second off the object's own
 * (docs/storage.md, "Dates of new files"); on local disk the ETag holds the
 * time, so there a time never moves alone.
 */
export function indexChange(was: Figures | undefined, now: Figures, walked = false): 'created' | 'modified' | undefined {
  if (!was || was.isFile !== now.isFile) return 'created';
  if (!now.isFile) return undefined;
  const etagKnown = now.etag !== undefined && now.etag !== null && was.etag !== undefined && was.etag !== null;
  if (walked && etagKnown && was.etag === now.etag && was.size === now.size) return undefined;
  return was.size !== now.size || was.modified !== now.modified || (etagKnown && was.etag !== now.etag) ? 'modified' : undefined;
}
