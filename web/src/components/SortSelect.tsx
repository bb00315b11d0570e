import type { Sort } from './list-order';
import { t, type MessageKey } from '../lib/i18n';

const SORTS: { label: MessageKey; sort: Sort }[] = [
  { label: 'sort.nameAsc', sort: { key: 'name', dir: 'asc' } },
  { label: 'sort.nameDesc', sort: { key: 'name', dir: 'desc' } },
  { label: 'sort.newest', sort: { key: 'modified', dir: 'desc' } },
  { label: 'sort.oldest', sort: { key: 'modified', dir: 'asc' } },
  { label: 'sort.largest', sort: { key: 'size', dir: 'desc' } },
  { label: 'sort.smallest', sort: { key: 'size', dir: 'asc' } },
];

/** The order as one menu: where there are no column headers to click (the grid view, the list on a phone). */
export function SortSelect({ sort, onSetSort }: { sort: Sort; onSetSort: (s: Sort) => void }) {
  const i = SORTS.findIndex((o) => o.sort.key === sort.key && o.sort.dir === sort.dir);
  return (
    <select className="sort-select" aria-label={t('sort.by')} value={i} onChange={(e) => onSetSort(SORTS[Number(e.target.value)]?.sort ?? sort)}>
      {SORTS.map((o, n) => (
        <option key={o.label} value={n}>
          {t(o.label)}
        </option>
      ))}
    </select>
  );
}
