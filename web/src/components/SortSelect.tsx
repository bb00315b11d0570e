import type { Sort } from './list-order';

const SORTS: { label: string; sort: Sort }[] = [
  { label: 'Name (A–Z)', sort: { key: 'name', dir: 'asc' } },
  { label: 'Name (Z–A)', sort: { key: 'name', dir: 'desc' } },
  { label: 'Newest first', sort: { key: 'modified', dir: 'desc' } },
  { label: 'Oldest first', sort: { key: 'modified', dir: 'asc' } },
  { label: 'Largest first', sort: { key: 'size', dir: 'desc' } },
  { label: 'Smallest first', sort: { key: 'size', dir: 'asc' } },
];

/** The order as one menu: where there are no column headers to click (the grid view, the list on a phone). */
export function SortSelect({ sort, onSetSort }: { sort: Sort; onSetSort: (s: Sort) => void }) {
  const i = SORTS.findIndex((o) => o.sort.key === sort.key && o.sort.dir === sort.dir);
  return (
    <select className="sort-select" aria-label="Sort by" value={i} onChange={(e) => onSetSort(SORTS[Number(e.target.value)]?.sort ?? sort)}>
      {SORTS.map((o, n) => (
        <option key={o.label} value={n}>
          {o.label}
        </option>
      ))}
    </select>
  );
}
