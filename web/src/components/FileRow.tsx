import { memo, type MouseEvent } from 'react';
import type { Entry } from '../api/storage';
import { formatDate, formatExactDate, formatSize } from '../lib/format';
import { onLinkClick } from '../lib/router';
import type { SelectMode } from './list-order';
import { Icon } from './icons';
import { Thumb } from './Thumb';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { withBase } from '../lib/base';
import type { MoveDrag } from './useMoveDrag';
import { t } from '../lib/i18n';

/** A click with Shift, Ctrl or ⌘ selects (as in desktop file managers) instead of opening. */
export const selectModeOf = (e: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }): SelectMode | null => (e.shiftKey ? 'range' : e.ctrlKey || e.metaKey ? 'toggle' : null);

export type RowProps = {
  storage: StorageApi;
  folder: Segments;
  entry: Entry;
  index: number;
  top: number;
  height: number;
  selected: boolean;
  tabStop: boolean;
  href: string | undefined;
  onSelect: (name: string, mode: SelectMode) => void;
  onOpen: (entry: Entry) => void;
  onMenu: (entry: Entry, at: { x: number; y: number }) => void;
  onFocusRow: (name: string) => void;
  drag: MoveDrag;
  /** Shared with people (a grant I gave): shows a badge. */
  shared?: boolean;
};

export const Row = memo(function Row({ storage, folder, entry, index, top, height, selected, tabStop, href, onSelect, onOpen, onMenu, onFocusRow, drag, shared }: RowProps) {
  const onClick = (e: MouseEvent) => {
    if ((e.target as HTMLElement).closest('a, button, input')) return;
    onSelect(entry.name, selectModeOf(e) ?? 'only');
  };
  /** The name: opens, unless a modifier key says select. */
  const onName = (e: MouseEvent, open: () => void) => {
    const mode = selectModeOf(e);
    if (mode === null) return open();
    e.preventDefault();
    onSelect(entry.name, mode);
  };
  return (
    <div
      {...drag.source(entry)}
      {...(entry.is_file ? {} : drag.target([...folder, entry.name]))}
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      data-index={index}
      data-name={entry.name}
      tabIndex={tabStop ? 0 : -1}
      className={`row${selected ? ' selected' : ''}`}
      style={{ transform: `translateY(${top}px)`, height }}
      onClick={onClick}
      onDoubleClick={(e) => {
        if (!(e.target as HTMLElement).closest('a, button, input')) onOpen(entry);
      }}
      onFocus={(e) => {
        if (e.target === e.currentTarget) onFocusRow(entry.name);
      }}
      onContextMenu={(e) => {
        e.preventDefault();
        onMenu(entry, { x: e.clientX, y: e.clientY });
      }}
    >
      <div role="gridcell" className="cell check">
        {/* onClick, not onChange: only the click knows Shift (a range from the last one clicked). */}
        <input type="checkbox" tabIndex={-1} aria-label={t('row.select', { name: entry.name })} checked={selected} onChange={() => undefined} onClick={(e) => onSelect(entry.name, e.shiftKey ? 'range' : 'toggle')} />
      </div>
      <div role="gridcell" className="cell name">
        <Thumb storage={storage} folder={folder} entry={entry} size={64} />
        <span className="name-text">
          {href ? (
            <a href={withBase(href)} tabIndex={-1} className="entry-link" draggable={false} onClick={(e) => onName(e, () => onLinkClick(e, href))}>
              {entry.name}
            </a>
          ) : (
            <button type="button" tabIndex={-1} className="entry-link" onClick={(e) => onName(e, () => onOpen(entry))}>
              {entry.name}
            </button>
          )}
          <span className="meta-line muted">
            {entry.is_file ? `${formatSize(entry.size)} · ` : ''}
            {formatDate(entry.modified)}
          </span>
        </span>
        {shared ? (
          <span className="badge badge-shared" title={t('row.sharedTitle')}>
            {t('row.shared')}
          </span>
        ) : null}
      </div>
      <div role="gridcell" className="cell size muted">
        {entry.is_file ? formatSize(entry.size) : '—'}
      </div>
      <div role="gridcell" className="cell modified muted" title={formatExactDate(entry.modified)}>
        {formatDate(entry.modified)}
      </div>
      <div role="gridcell" className="cell actions">
        <button
          type="button"
          tabIndex={-1}
          className="icon-button"
          aria-label={t('row.actionsFor', { name: entry.name })}
          aria-haspopup="menu"
          onClick={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            onMenu(entry, { x: r.right, y: r.bottom });
          }}
        >
          <Icon name="more" />
        </button>
      </div>
    </div>
  );
});
