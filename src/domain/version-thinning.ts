/**
 * Which file versions to keep, thinned like Nextcloud's versions app: the
 * older a version, the sparser they are kept. By age (now − the time the
 * version was made):
 *
 * | age            | kept                  |
 * |----------------|-----------------------|
 * | under 10 s     | every version         |
 * | 10 s – 1 min   | one per 10 s          |
 * | 1 min – 1 h    | one per minute        |
 * | 1 h – 1 day    | one per hour          |
 * | 1 day – 30 days| one per day           |
 * | over 30 days   | one per week          |
 *
 * and none older than `maxDays` (0: no cap). In each slot the newest version
 * stays. Slots are counted back from `now`, so a version only ever moves to
 * a coarser band as it ages, and thinning again later never brings one back.
 * Pure: a table-driven test covers it (version-thinning.test.ts).
 */
const S = 1000;
const BANDS: readonly { readonly until: number; readonly step: number }[] = [
  { until: 10 * S, step: 0 },
  { until: 60 * S, step: 10 * S },
  { until: 3600 * S, step: 60 * S },
  { until: 86_400 * S, step: 3600 * S },
  { until: 30 * 86_400 * S, step: 86_400 * S },
  { until: Infinity, step: 7 * 86_400 * S },
];

export type Dated = { readonly id: string; readonly at: number };

/** The ids of the versions to delete (a subset of `versions`, in no particular order). */
export function versionsToDrop(versions: readonly Dated[], now: number, maxDays = 0): string[] {
  const drop: string[] = [];
  const seen = new Set<string>();
  // Newest first, so the first version met in a slot is the one kept.
  for (const v of [...versions].sort((a, b) => b.at - a.at || (a.id < b.id ? -1 : 1))) {
    const age = Math.max(0, now - v.at);
    if (maxDays > 0 && age > maxDays * 86_400 * S) {
      drop.push(v.id);
      continue;
    }
    const band = BANDS.findIndex((b) => age < b.until);
    const { step } = BANDS[band] as { step: number };
    if (step === 0) continue;
    const slot = `${band}:${Math.floor(age / step)}`;
    if (seen.has(slot)) drop.push(v.id);
    else seen.add(slot);
  }
  return drop;
}
