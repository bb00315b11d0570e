import { type KeyboardEvent, type MouseEvent } from 'react';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { formatSize } from '../lib/format';
import type { SelectMode, Sort } from './list-order';
import { SortSelect } from './SortSelect';
import { Thumb } from './Thumb';
import { selectModeOf } from './FileRow';
import type { MoveDrag } from './useMoveDrag';
import { t } from '../lib/i18n';

type Props = {
  storage: StorageApi;
  folder: Segments;
  entries: readonly Entry[];
  sort: Sort;
  onSetSort: (sort: Sort) => void;
  selected: ReadonlySet<string>;
  onSelect: (name: string, mode: SelectMode) => void;
  onOpen: (entry: Entry) => void;
  onMenu: (entry: Entry, at: { x: number; y: number }) => void;
  drag: MoveDrag;
};

/**
 * The grid view: a tile per entry with its 256 px thumbnail (images) or kind
 * icon. A click opens (the gallery for images), Ctrl/Shift-click or the
 * check box selects; arrow keys move between tiles. Thumbnails load only as
 * tiles come into view, and off-screen tiles skip layout (content-visibility),
 * so a folder of thousands of photos stays light.
 */
export function FileTiles({ storage, folder, entries, sort, onSetSort, selected, onSelect, onOpen, onMenu, drag }: Props) {
  function onKeyDown(e: KeyboardEvent<HTMLUListElement>) {
    const tiles = [...e.currentTarget.querySelectorAll<HTMLElement>('.tile-open')];
    const i = tiles.indexOf(document.activeElement as HTMLElement);
    if (i < 0) return;
    // Tiles per row: how many share the first tile's top edge.
    const firstTop = tiles[0]?.getBoundingClientRect().top ?? 0;
    const wrap = tiles.findIndex((t) => t.getBoundingClientRect().top > firstTop + 1);
    const columns = wrap === -1 ? tiles.length : Math.max(1, wrap);
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns, Home: -i, End: tiles.length - 1 - i }[e.key];
    if (step === undefined) {
      if (e.key === ' ') {
        e.preventDefault();
        const name = tiles[i]?.dataset.name;
        if (name !== undefined) onSelect(name, 'toggle');
      }
      return;
    }
    e.preventDefault();
    tiles[Math.max(0, Math.min(tiles.length - 1, i + step))]?.focus();
  }

  const click = (entry: Entry) => (e: MouseEvent) => {
    const mode = selectModeOf(e);
    if (mode) {
      e.preventDefault();
      onSelect(entry.name, mode);
    } else onOpen(entry);
  };

  return (
    <div className="tile-frame">
      {/* Tiles have no column headers to click: the order is a menu above them. */}
      <div className="tile-head">
        <SortSelect sort={sort} onSetSort={onSetSort} />
      </div>
    <ul className="tile-view" aria-label={t('list.files')} onKeyDown={onKeyDown}>
      {entries.map((entry) => {
        const isSelected = selected.has(entry.name);
        return (
          <li
            key={entry.name}
            className={`tile${isSelected ? ' selected' : ''}`}
            data-name={entry.name}
            {...drag.source(entry)}
            {...(entry.is_file ? {} : drag.target([...folder, entry.name]))}
            onContextMenu={(e) => {
              e.preventDefault();
              onMenu(entry, { x: e.clientX, y: e.clientY });
            }}
          >
            <input type="checkbox" className="tile-check" aria-label={t('row.select', { name: entry.name })} checked={isSelected} onChange={() => undefined} onClick={(e) => onSelect(entry.name, e.shiftKey ? 'range' : 'toggle')} />
            <button type="button" className="tile-open" data-name={entry.name} title={entry.name} onClick={click(entry)}>
              <Thumb storage={storage} folder={folder} entry={entry} size={256} iconSize={48} />
              <span className="tile-name">{entry.name}</span>
              <span className="tile-meta muted small">{entry.is_file ? formatSize(entry.size) : t('list.folder')}</span>
            </button>
          </li>
        );
      })}
    </ul>
    </div>
  );
}
