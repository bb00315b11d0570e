/**
 * A share link (CONTRACT "Share links"). `path` is the target in `owner`'s
 * tree ('' for the root, 'a/b.txt'); undefined optional fields mean "none"
 * (no password, no download limit, never expires).
 */
export type Share = {
  readonly id: string;
  readonly ownerId: string;
  readonly owner: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly uploadOnly: boolean;
  readonly passwordHash: string | undefined;
  readonly maxDownloads: number | undefined;
  /** The download count in units (src/domain/download-units.ts): UNITS_PER_DOWNLOAD is one whole download. */
  readonly downloadUnits: number;
  readonly expiresAt: number | undefined;
  readonly createdAt: number;
  /** Whether the owner is disabled (read by get(); a disabled owner's links are dead). */
  readonly ownerDisabled?: boolean;
};
