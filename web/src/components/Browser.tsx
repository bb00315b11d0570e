import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { messageOf } from '../api/errors';
import { browseUrl, isInside, type Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { dragHasFiles, fromDrop, fromInput } from '../lib/drop';
import { plural } from '../lib/format';
import { navigate, useTitle } from '../lib/router';
import { FileList } from './FileList';
import type { SelectMode } from './list-order';
import { AppHeader } from './AppHeader';
import { EmptyState, ErrorState, Skeleton } from './FolderStates';
import { Icon } from './icons';
import { RowMenu, type MenuAction } from './RowMenu';
import { useNotify } from './Toasts';
import { Breadcrumbs, SelectionBar, ToolButton } from './Toolbar';
import { UploadPanel } from './UploadPanel';
import { useListing } from './useListing';
import { useUploads } from './useUploads';
import { startDownloads } from './actions';
import { BrowserDialogs, type DialogState } from './BrowserDialogs';
import { Banner, useBanner } from './Banner';

/** The file manager: one folder of the signed-in user, with everything that can be done to it. */
export function Browser({ storage, segments }: { storage: StorageApi; segments: Segments }) {
  const notify = useNotify();
  const banner = useBanner('page', storage.client, segments.join('/'));
  const { state, sorted, sort, toggleSort, setSortTo, reload } = useListing(storage, segments);
  const [selected, setSelected] = useState<Set<string>>(() => new Set());
  const [focused, setFocused] = useState<string | null>(null);
  const anchor = useRef<string | null>(null);
  const [dialog, setDialog] = useState<DialogState | null>(null);
  const [menu, setMenu] = useState<{ entry: Entry; at: { x: number; y: number } } | null>(null);
  const [dragging, setDragging] = useState(false);
  const dragDepth = useRef(0);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const cameFrom = useRef<string | null>(null);
  const [focusRequest, setFocusRequest] = useState(0);
  /** Move keyboard focus into the list once the next listing has loaded. */
  const focusOnLoad = useRef(false);
  const listHasFocus = () => !!document.activeElement?.closest('.file-grid');
  const folderName = segments[segments.length - 1] ?? 'My files';
  useTitle(folderName);

  // A new folder: fresh selection; focus the child we came up from, if any.
  const key = segments.join('\0');
  useEffect(() => {
    setSelected(new Set());
    setFocused(cameFrom.current);
    anchor.current = null;
    cameFrom.current = null;
    setDialog(null);
    setMenu(null);
  }, [key]);

  // After a reload, forget selected names that are gone.
  useEffect(() => {
    if (state.status !== 'ready') return;
    if (focusOnLoad.current) {
      focusOnLoad.current = false;
      setFocusRequest((n) => n + 1);
    }
    const names = new Set(state.entries.map((e) => e.name));
    setSelected((s) => (Array.from(s).every((n) => names.has(n)) ? s : new Set(Array.from(s).filter((n) => names.has(n)))));
  }, [state]);

  const reloadTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const onFolderChanged = useCallback(
    (folder: Segments) => {
      // An upload landed here or in a sub-folder (which may be new): refresh, at most every 150 ms.
      if (!isInside(folder, segments)) return;
      clearTimeout(reloadTimer.current);
      reloadTimer.current = setTimeout(reload, 150);
    },
    [segments, reload],
  );
  const uploads = useUploads(storage, onFolderChanged);

  const byName = useMemo(() => new Map(sorted.map((e) => [e.name, e])), [sorted]);
  const selectedEntries = sorted.filter((e) => selected.has(e.name));
  /** What an action applies to: the selection, or else the focused row. */
  const targets = (): Entry[] => {
    if (selectedEntries.length) return selectedEntries;
    const f = focused ? byName.get(focused) : undefined;
    return f ? [f] : [];
  };

  const select = useCallback(
    (name: string, mode: SelectMode) => {
      setFocused(name);
      setSelected((prev) => {
        if (mode === 'toggle') {
          const next = new Set(prev);
          if (next.has(name)) next.delete(name);
          else next.add(name);
          anchor.current = name;
          return next;
        }
        if (mode === 'range' && anchor.current !== null) {
          const a = sorted.findIndex((e) => e.name === anchor.current);
          const b = sorted.findIndex((e) => e.name === name);
          if (a >= 0 && b >= 0) return new Set(sorted.slice(Math.min(a, b), Math.max(a, b) + 1).map((e) => e.name));
        }
        anchor.current = name;
        return new Set([name]);
      });
    },
    [sorted],
  );

  const open = useCallback(
    (entry: Entry) => {
      if (entry.is_file) return setDialog({ kind: 'preview', entry });
      focusOnLoad.current = listHasFocus();
      navigate(browseUrl([...segments, entry.name]));
    },
    [segments],
  );

  const goUp = useCallback(() => {
    if (segments.length === 0) return;
    cameFrom.current = segments[segments.length - 1] ?? null;
    focusOnLoad.current = true;
    navigate(browseUrl(segments.slice(0, -1)));
  }, [segments]);

  const download = useCallback(
    (entries: Entry[]) => {
      const files = entries.filter((e) => e.is_file);
      if (files.length < entries.length) notify(files.length ? 'Folders are skipped: only files can be downloaded.' : 'Only files can be downloaded. Open the folder and select its files.', 'error');
      if (files.length) startDownloads(storage, segments, files).catch((e: unknown) => notify(messageOf(e), 'error'));
    },
    [storage, segments, notify],
  );

  const act = (action: MenuAction, entries: Entry[]) => {
    const one = entries.length === 1 ? entries[0] : undefined;
    if (entries.length === 0) return;
    switch (action) {
      case 'open':
        if (one) open(one);
        break;
      case 'download':
        download(entries);
        break;
      case 'share':
        if (one?.is_file) setDialog({ kind: 'share', path: [...segments, one.name] });
        break;
      case 'rename':
        if (one) setDialog({ kind: 'rename', entry: one });
        break;
      case 'move':
        setDialog({ kind: 'move', entries });
        break;
      case 'delete':
        setDialog({ kind: 'delete', entries });
        break;
    }
  };

  // Page-wide keys that are not tied to the list: "?" shows the shortcuts.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '?' || dialog || (e.target as HTMLElement).closest('input, textarea, select')) return;
      e.preventDefault();
      setDialog({ kind: 'shortcuts' });
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dialog]);

  async function pickFiles(list: FileList | null, input: HTMLInputElement | null) {
    if (list && list.length) await uploads.add(fromInput(list), segments);
    if (input) input.value = '';
  }

  function onDrop(e: DragEvent) {
    if (!dragHasFiles(e.dataTransfer)) return;
    e.preventDefault();
    dragDepth.current = 0;
    setDragging(false);
    fromDrop(e.dataTransfer).then(
      (picked) => (picked.files.length || picked.emptyDirs.length ? uploads.add(picked, segments) : undefined),
      (err: unknown) => notify(`Could not read the dropped items: ${messageOf(err)}`, 'error'),
    );
  }

  /** After a change: reload, then focus (and select) `name`, or just the list. */
  const afterChange = useCallback(
    (name?: string) => {
      focusOnLoad.current = true;
      setFocused(name ?? null);
      setSelected(new Set(name ? [name] : []));
      reload();
    },
    [reload],
  );
  const t = targets();
  const notFound = state.status === 'error' && state.error.status === 404;

  return (
    <div
      className="app"
      onDragEnter={(e) => {
        if (!dragHasFiles(e.dataTransfer)) return;
        e.preventDefault();
        dragDepth.current++;
        setDragging(true);
      }}
      onDragOver={(e) => {
        if (!dragHasFiles(e.dataTransfer)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
      }}
      onDragLeave={() => {
        dragDepth.current = Math.max(0, dragDepth.current - 1);
        if (dragDepth.current === 0) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <Banner kind="page" text={banner} />
      <AppHeader storage={storage} onShortcuts={() => setDialog({ kind: 'shortcuts' })} />
      <main className="browser" aria-busy={state.status === 'loading'}>
        <div className="toolbar">
          {selected.size > 0 ? (
            <SelectionBar
              count={selected.size}
              single={selectedEntries.length === 1 ? (selectedEntries[0] ?? null) : null}
              anyFile={selectedEntries.some((e) => e.is_file)}
              onDownload={() => download(selectedEntries)}
              onShare={() => act('share', selectedEntries)}
              onRename={() => act('rename', selectedEntries)}
              onMove={() => act('move', selectedEntries)}
              onDelete={() => act('delete', selectedEntries)}
              onClear={() => setSelected(new Set())}
            />
          ) : (
            <>
              <Breadcrumbs segments={segments} />
              <div className="toolbar-actions" role="toolbar" aria-label="Folder actions">
                <ToolButton icon="folderPlus" label="New folder" onClick={() => setDialog({ kind: 'new-folder' })} disabled={notFound} />
                <ToolButton icon="folderUp" label="Upload folder" onClick={() => folderInput.current?.click()} disabled={notFound} />
                <ToolButton icon="upload" label="Upload files" onClick={() => fileInput.current?.click()} disabled={notFound} primary />
              </div>
            </>
          )}
        </div>
        <input ref={fileInput} type="file" multiple hidden data-testid="file-input" onChange={(e) => pickFiles(e.currentTarget.files, e.currentTarget)} />
        <input ref={folderInput} type="file" multiple hidden data-testid="folder-input" {...{ webkitdirectory: '', directory: '' }} onChange={(e) => pickFiles(e.currentTarget.files, e.currentTarget)} />

        {state.status === 'error' ? (
          <ErrorState error={state.error} notFound={notFound} onRetry={reload} />
        ) : state.status === 'loading' ? (
          <Skeleton />
        ) : sorted.length === 0 ? (
          <EmptyState onUpload={() => fileInput.current?.click()} onNewFolder={() => setDialog({ kind: 'new-folder' })} />
        ) : (
          <FileList
            entries={sorted}
            selected={selected}
            focused={focused}
            sort={sort}
            onSort={toggleSort}
            onSetSort={setSortTo}
            onFocusRow={setFocused}
            onSelect={select}
            onSelectAll={() => setSelected(new Set(sorted.map((e) => e.name)))}
            onClearSelection={() => setSelected(new Set())}
            onOpen={open}
            onMenu={(entry, at) => {
              setFocused(entry.name);
              setMenu({ entry, at });
            }}
            onDelete={() => act('delete', targets())}
            onRename={() => t.length === 1 && act('rename', t)}
            onUp={goUp}
            hrefOf={(e) => (e.is_file ? undefined : browseUrl([...segments, e.name]))}
            focusRequest={focusRequest}
          />
        )}
        {state.status === 'ready' ? (
          <div className="status-line muted" data-loaded-ms={Math.round(state.loadedIn)}>
            {plural(sorted.filter((e) => !e.is_file).length, 'folder')}, {plural(sorted.filter((e) => e.is_file).length, 'file')}
          </div>
        ) : null}
        {dragging ? (
          <div className="drop-overlay" aria-hidden="true">
            <div>
              <Icon name="upload" size={40} />
              <p>Drop files or folders to upload them to “{folderName}”</p>
            </div>
          </div>
        ) : null}
      </main>

      {menu ? (
        <RowMenu
          entry={menu.entry}
          at={menu.at}
          onAction={(a) => act(a, selected.has(menu.entry.name) && a !== 'open' && a !== 'rename' && a !== 'share' ? selectedEntries : [menu.entry])}
          onClose={() => {
            setMenu(null);
            document.querySelector<HTMLElement>(`.row[data-name="${CSS.escape(menu.entry.name)}"]`)?.focus();
          }}
        />
      ) : null}

      {dialog ? (
        <BrowserDialogs
          dialog={dialog}
          setDialog={setDialog}
          storage={storage}
          segments={segments}
          sorted={sorted}
          afterChange={afterChange}
          download={download}
          onFocusName={setFocused}
        />
      ) : null}

      <UploadPanel items={uploads.items} summary={uploads.summary} onCancel={uploads.cancel} onCancelAll={uploads.cancelAll} onRetry={uploads.retry} onClose={uploads.clear} />
    </div>
  );
}
