import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { Segments } from '../api/paths';
import type { Place } from '../lib/place';
import type { Entry } from '../api/storage';
import { onLinkClick } from '../lib/router';
import { Icon } from './icons';
import type { MenuAction } from './RowMenu';
import { withBase } from '../lib/base';
import type { ViewMode } from './useViewMode';
import type { MoveDrag } from './useMoveDrag';
import { locale, t } from '../lib/i18n';

/**
 * Breadcrumbs from "My files" to the current folder; the last one is the page
 * itself. Rows dropped on a crumb move there. When the trail does not fit (a
 * deep folder, a phone), its first crumbs give way to "…", a link up to the
 * last of them: names are shown whole or not at all, never cut on the left.
 */
export function Breadcrumbs({ segments, drag, place }: { segments: Segments; drag?: MoveDrag; place: Place }) {
  const ref = useRef<HTMLOListElement>(null);
  // A shared folder's trail starts at the granted folder: what is above it is not the recipient's to see.
  const root = place.root;
  const crumbs = [{ name: root.at(-1) ?? t('nav.myFiles'), path: [...root] }, ...segments.slice(root.length).map((name, i) => ({ name, path: segments.slice(0, root.length + i + 1) }))];
  const trail = crumbs.map((c) => c.name).join('\0');
  // How many leading crumbs "…" stands for, for this trail at this width.
  const [folded, setFolded] = useState({ trail, width: 0, count: 0 });
  const [width, setWidth] = useState(0);
  const count = folded.trail === trail && folded.width === width ? folded.count : 0;

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  // Measured before paint: one more crumb folds while the trail overflows (the current folder always stays).
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && el.scrollWidth > el.clientWidth + 1 && count < crumbs.length - 1) setFolded({ trail, width, count: count + 1 });
  });

  const shown = crumbs.slice(count);
  const up = count > 0 ? crumbs[count - 1] : undefined;
  return (
    <nav aria-label={t('toolbar.breadcrumb')} className="breadcrumbs">
      <ol ref={ref}>
        {up ? (
          <li key="folded" className="crumb-folded">
            <a
              href={withBase(place.url(up.path))}
              className="crumb"
              aria-label={t('toolbar.upTo', { name: up.name })}
              title={crumbs.slice(0, count).map((c) => c.name).join(' / ')}
              draggable={false}
              onClick={(e) => onLinkClick(e, place.url(up.path))}
              {...drag?.target(up.path)}
            >
              <span className="crumb-text">…</span>
            </a>
          </li>
        ) : null}
        {shown.map((c, j) => {
          const i = j + count;
          const last = i === crumbs.length - 1;
          const href = place.url(c.path);
          return (
            // The current folder's name gives way (with an ellipsis) only once nothing is left to fold.
            <li key={href} className={last && count === crumbs.length - 1 ? 'crumb-shrinks' : undefined}>
              {i > 0 ? <Icon name="chevronRight" size={16} className="crumb-sep" /> : null}
              {last ? (
                <span aria-current="page" className="crumb current" title={c.name}>
                  {i === 0 ? <Icon name={place.shared ? 'users' : 'home'} size={18} /> : null}
                  <span className="crumb-text">{c.name}</span>
                </span>
              ) : (
                <a href={withBase(href)} className="crumb" title={c.name} draggable={false} onClick={(e) => onLinkClick(e, href)} {...drag?.target(c.path)}>
                  {i === 0 ? <Icon name={place.shared ? 'users' : 'home'} size={18} /> : null}
                  <span className="crumb-text">{c.name}</span>
                </a>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

type Actions = {
  count: number;
  single: { is_file: boolean } | null;
  anyFile: boolean;
  onDownload: () => void;
  onZip: () => void;
  onShare: () => void;
  onRename: () => void;
  onMove: () => void;
  onCopy: () => void;
  onDelete: () => void;
  onClear: () => void;
  allowed: (a: MenuAction) => boolean;
};

/** What can be done with the selection; replaces the folder actions while something is selected. */
export function SelectionBar(a: Actions) {
  return (
    <div className="selection-bar" role="toolbar" aria-label={t('toolbar.selectionActions')}>
      <button type="button" className="icon-button" aria-label={t('toolbar.clearSelection')} onClick={a.onClear}>
        <Icon name="close" />
      </button>
      <span className="selection-count" aria-live="polite">
        {a.count.toLocaleString(locale())}
        {/* On a phone the number alone, beside its clear button: the room goes to the actions. */}
        <span className="count-word"> {t('toolbar.selected', { count: a.count })}</span>
      </span>
      <span className="spacer" />
      {a.single?.is_file !== false ? <ToolButton icon="download" label={t('action.download')} onClick={a.onDownload} disabled={!a.anyFile} /> : null}
      {a.count > 1 || a.single?.is_file === false ? <ToolButton icon="archive" label={t('action.zip')} onClick={a.onZip} /> : null}
      {a.single && a.allowed('share') ? <ToolButton icon="link" label={t('action.share')} onClick={a.onShare} /> : null}
      {a.single && a.allowed('rename') ? <ToolButton icon="pencil" label={t('action.rename')} onClick={a.onRename} /> : null}
      {a.allowed('move') ? <ToolButton icon="move" label={t('action.move')} onClick={a.onMove} /> : null}
      {a.allowed('copy') ? <ToolButton icon="copy" label={t('action.copy')} onClick={a.onCopy} /> : null}
      {a.allowed('delete') ? <ToolButton icon="trash" label={t('action.delete')} onClick={a.onDelete} danger /> : null}
    </div>
  );
}

export function ToolButton(props: { icon: Parameters<typeof Icon>[0]['name']; label: string; onClick: () => void; disabled?: boolean; danger?: boolean; primary?: boolean; title?: string }) {
  return (
    <button
      type="button"
      className={`button tool${props.primary ? ' primary' : ''}${props.danger ? ' danger-text' : ''}`}
      onClick={props.onClick}
      disabled={props.disabled}
      aria-label={props.label}
      title={props.title ?? props.label}
    >
      <Icon name={props.icon} size={18} />
      <span className="tool-label">{props.label}</span>
    </button>
  );
}

type FolderToolbarProps = {
  segments: Segments;
  place: Place;
  allowed: (a: MenuAction) => boolean;
  /** How many names are selected, and the selected entries of the listing. */
  count: number;
  selection: readonly Entry[];
  /** The folder does not exist: nothing can be created in it. */
  missing: boolean;
  onAction: (action: MenuAction) => void;
  onClear: () => void;
  onNewFolder: () => void;
  onUploadFolder: () => void;
  onUploadFiles: () => void;
  view: ViewMode;
  onView: (view: ViewMode) => void;
  drag: MoveDrag;
};

/** The bar above the list: the selection's actions while something is selected, else the path and the folder's actions. */
export function FolderToolbar(p: FolderToolbarProps) {
  return (
    <div className="toolbar">
      {p.count > 0 ? (
        <SelectionBar
          count={p.count}
          single={p.selection.length === 1 ? (p.selection[0] ?? null) : null}
          anyFile={p.selection.some((e) => e.is_file)}
          onDownload={() => p.onAction('download')}
          onZip={() => p.onAction('zip')}
          onShare={() => p.onAction('share')}
          onRename={() => p.onAction('rename')}
          onMove={() => p.onAction('move')}
          onCopy={() => p.onAction('copy')}
          onDelete={() => p.onAction('delete')}
          onClear={p.onClear}
          allowed={p.allowed}
        />
      ) : (
        <>
          <Breadcrumbs segments={p.segments} drag={p.drag} place={p.place} />
          <div className="toolbar-actions" role="toolbar" aria-label={t('toolbar.folderActions')}>
            <button
              type="button"
              className="button tool view-toggle"
              aria-pressed={p.view === 'grid'}
              aria-label={t('toolbar.gridView')}
              title={p.view === 'grid' ? t('toolbar.showList') : t('toolbar.showGrid')}
              onClick={() => p.onView(p.view === 'grid' ? 'list' : 'grid')}
            >
              <Icon name={p.view === 'grid' ? 'list' : 'grid'} size={18} />
            </button>
            {p.place.writable ? (
              <>
                <ToolButton icon="folderPlus" label={t('toolbar.newFolder')} onClick={p.onNewFolder} disabled={p.missing} />
                <ToolButton icon="folderUp" label={t('toolbar.uploadFolder')} onClick={p.onUploadFolder} disabled={p.missing} />
                <ToolButton icon="upload" label={t('toolbar.uploadFiles')} onClick={p.onUploadFiles} disabled={p.missing} primary />
              </>
            ) : (
              <span className="badge badge-permission read-only-note">{t('toolbar.viewOnly')}</span>
            )}
          </div>
        </>
      )}
    </div>
  );
}
