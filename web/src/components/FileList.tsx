import { useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { Entry, StorageApi } from '../api/storage';
import type { Segments } from '../api/paths';
import { Row } from './FileRow';
import { SortSelect } from './SortSelect';
import { Icon } from './icons';
import type { SelectMode, Sort, SortKey } from './list-order';
import type { MoveDrag } from './useMoveDrag';
import { usePhone } from '../lib/phone';
import { t } from '../lib/i18n';

type Props = {
  storage: StorageApi;
  folder: Segments;
  entries: readonly Entry[];
  selected: ReadonlySet<string>;
  focused: string | null;
  sort: Sort;
  onSort: (key: SortKey) => void;
  onSetSort: (sort: Sort) => void;
  onFocusRow: (name: string) => void;
  onSelect: (name: string, mode: SelectMode) => void;
  onSelectAll: () => void;
  onClearSelection: () => void;
  onOpen: (entry: Entry) => void;
  onMenu: (entry: Entry, at: { x: number; y: number }) => void;
  onDelete: () => void;
  onRename: () => void;
  onUp: () => void;
  hrefOf: (entry: Entry) => string | undefined;
  /** Names in this folder shared with people. */
  sharedNames?: ReadonlySet<string>;
  /** Bumped to move keyboard focus into the list (after navigation or a dialog). */
  focusRequest: number;
  drag: MoveDrag;
};

const OVERSCAN = 8;

function useRowHeight(): number {
  return usePhone() ? 60 : 48;
}

/**
 * The folder's entries as an ARIA grid, virtualized: only the rows in view
 * (plus a few) are in the DOM, absolutely placed in a spacer as tall as all
 * rows, so a 10,000-entry folder scrolls as smoothly as a 10-entry one.
 * One row is the tab stop (roving tabindex); the keyboard moves it.
 */
export function FileList(props: Props) {
  const { entries, focused } = props;
  const rowH = useRowHeight();
  const scroller = useRef<HTMLDivElement>(null);
  const [viewport, setViewport] = useState({ top: 0, height: 800 });
  const focusIndex = focused === null ? -1 : entries.findIndex((e) => e.name === focused);
  const wantFocus = useRef(false);
  const lastRequest = useRef(props.focusRequest);
  if (props.focusRequest !== lastRequest.current) {
    lastRequest.current = props.focusRequest;
    wantFocus.current = true;
  }

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setViewport({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(viewport.top / rowH) - OVERSCAN);
  const last = Math.min(entries.length, Math.ceil((viewport.top + viewport.height) / rowH) + OVERSCAN);

  // After a keyboard move, bring the row into view, then give it focus once it is rendered.
  useLayoutEffect(() => {
    if (!wantFocus.current || entries.length === 0) return;
    const el = scroller.current;
    if (!el) return;
    const target = focusIndex < 0 ? 0 : focusIndex;
    const top = target * rowH;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowH > el.scrollTop + el.clientHeight) el.scrollTop = top + rowH - el.clientHeight;
    const row = el.querySelector<HTMLElement>(`[data-index="${target}"]`);
    if (row) {
      row.focus({ preventScroll: true });
      wantFocus.current = false;
    } else setViewport({ top: el.scrollTop, height: el.clientHeight });
  });

  function move(to: number, e: KeyboardEvent) {
    const i = Math.max(0, Math.min(entries.length - 1, to));
    const entry = entries[i];
    if (!entry) return;
    e.preventDefault();
    wantFocus.current = true;
    // Selection follows the cursor, as in desktop file managers; Ctrl moves without selecting.
    if (e.shiftKey) props.onSelect(entry.name, 'range');
    else if (e.ctrlKey || e.metaKey) props.onFocusRow(entry.name);
    else props.onSelect(entry.name, 'only');
  }

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    if ((e.target as HTMLElement).closest('input')) return;
    const page = Math.max(1, Math.floor(viewport.height / rowH) - 1);
    const cur = focusIndex < 0 ? -1 : focusIndex;
    const entry = entries[cur];
    const mod = e.ctrlKey || e.metaKey;
    switch (e.key) {
      case 'ArrowDown':
        return move(cur + 1, e);
      case 'ArrowUp':
        if (e.altKey) return (e.preventDefault(), props.onUp());
        return move(cur < 0 ? 0 : cur - 1, e);
      case 'Home':
        return move(0, e);
      case 'End':
        return move(entries.length - 1, e);
      case 'PageDown':
        return move(cur + page, e);
      case 'PageUp':
        return move(cur - page, e);
      case 'Enter':
        if (entry) {
          e.preventDefault();
          props.onOpen(entry);
        }
        return;
      case ' ':
        if (entry) {
          e.preventDefault();
          props.onSelect(entry.name, 'toggle');
        }
        return;
      case 'Delete':
        e.preventDefault();
        return props.onDelete();
      case 'F2':
        e.preventDefault();
        return props.onRename();
      case 'Backspace':
        e.preventDefault();
        return props.onUp();
      case 'Escape':
        if (props.selected.size) {
          e.preventDefault();
          props.onClearSelection();
        }
        return;
      case 'ContextMenu':
        if (entry) openMenuFor(e, entry, cur);
        return;
      case 'F10':
        if (e.shiftKey && entry) openMenuFor(e, entry, cur);
        return;
      default:
        if (mod && e.key.toLowerCase() === 'a') {
          e.preventDefault();
          props.onSelectAll();
        }
    }
  }

  function openMenuFor(e: KeyboardEvent, entry: Entry, index: number) {
    e.preventDefault();
    const row = scroller.current?.querySelector<HTMLElement>(`[data-index="${index}"]`);
    const r = row?.getBoundingClientRect();
    props.onMenu(entry, r ? { x: r.left + Math.min(r.width - 24, 260), y: r.bottom - 8 } : { x: 100, y: 100 });
  }

  const header = (key: SortKey, label: string, className: string) => {
    const active = props.sort.key === key;
    return (
      <div role="columnheader" className={`cell ${className}`} aria-sort={active ? (props.sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
        <button type="button" className={`sort-button${active ? ' active' : ''}`} onClick={() => props.onSort(key)}>
          {label}
          <Icon name={active && props.sort.dir === 'desc' ? 'chevronDown' : 'chevronUp'} size={14} className={active ? '' : 'invisible'} />
        </button>
      </div>
    );
  };

  const rows = [];
  for (let i = first; i < last; i++) {
    const entry = entries[i];
    if (!entry) continue;
    rows.push(
      <Row
        key={entry.name}
        storage={props.storage}
        folder={props.folder}
        entry={entry}
        index={i}
        top={i * rowH}
        height={rowH}
        selected={props.selected.has(entry.name)}
        tabStop={i === focusIndex || (focusIndex < 0 && i === 0)}
        href={props.hrefOf(entry)}
        onSelect={props.onSelect}
        onOpen={props.onOpen}
        onMenu={props.onMenu}
        onFocusRow={props.onFocusRow}
        drag={props.drag}
        shared={props.sharedNames?.has(entry.name)}
      />,
    );
  }

  const allSelected = entries.length > 0 && props.selected.size === entries.length;
  return (
    <div className="file-grid" role="grid" aria-label={t('list.files')} aria-rowcount={entries.length + 1} aria-multiselectable="true" onKeyDown={onKeyDown}>
      <div role="rowgroup" className="grid-head">
        <div role="row" aria-rowindex={1} className="row head-row">
          <div role="columnheader" className="cell check">
            <input
              type="checkbox"
              aria-label={allSelected ? t('toolbar.clearSelection') : t('list.selectAll')}
              checked={allSelected}
              ref={(el) => {
                if (el) el.indeterminate = props.selected.size > 0 && !allSelected;
              }}
              onChange={() => (allSelected ? props.onClearSelection() : props.onSelectAll())}
            />
          </div>
          {header('name', t('list.name'), 'name')}
          {/* On a phone the Size and Modified columns are hidden, and this menu takes the place of the headers. */}
          <div className="cell phone-sort">
            <SortSelect sort={props.sort} onSetSort={props.onSetSort} />
          </div>
          {header('size', t('list.size'), 'size')}
          {header('modified', t('list.modified'), 'modified')}
          <div role="columnheader" className="cell actions">
            <span className="visually-hidden">{t('list.actions')}</span>
          </div>
        </div>
      </div>
      <div className="grid-scroll" ref={scroller} role="rowgroup" onScroll={(e) => setViewport({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}>
        <div className="grid-spacer" style={{ height: entries.length * rowH }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
