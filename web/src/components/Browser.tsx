import { useCallback, useEffect, useMemo, useRef } from 'react';
import { type Segments } from '../api/paths';
import { ownPlace, type Place } from '../lib/place';
import type { MenuAction } from './RowMenu';
import { useGivenGrants } from './useGivenGrants';
import type { Entry, StorageApi } from '../api/storage';
import { useQueryParam, useTitle } from '../lib/router';
import { announceStorageChange } from '../lib/usage-events';
import { AppHeader } from './AppHeader';
import { Banner, useBanner } from './Banner';
import { BrowserDialogs, type DialogState } from './BrowserDialogs';
import { DropOverlay, useFileDrop } from './FileDrop';
import { FileList } from './FileList';
import { FileTiles } from './FileTiles';
import { useViewMode } from './useViewMode';
import { EmptyState, ErrorState, FolderSummary, Skeleton } from './FolderStates';
import { RowMenu } from './RowMenu';
import { useAccount } from './useAccount';
import { useShortcutsKey } from './ShortcutsDialog';
import { FolderToolbar } from './Toolbar';
import { UploadPanel } from './UploadPanel';
import { UploadPickers } from './UploadPickers';
import { useEntryActions } from './useEntryActions';
import { useFolderNavigation } from './useFolderNavigation';
import { useFolderUploads } from './useFolderUploads';
import { useListing } from './useListing';
import { useSelection } from './useSelection';
import { useFolderScoped } from './useFolderScoped';
import { useMoveDrag } from './useMoveDrag';
import { moveEntries } from './actions';
import { rememberMove } from '../lib/recent-moves';
import { useNotify } from './Toasts';
import { useUndoMove } from './undo';
import { SkipLink } from './SkipLink';
import { Icon } from './icons';
import { useLiveFolder } from './useLiveFolder';
import { t } from '../lib/i18n';

const NOTHING = () => undefined;

/**
 * The file manager: one folder of the signed-in user, with everything that can
 * be done to it. This component wires the pieces together; each concern lives
 * in its own hook (listing, selection, navigation, actions, uploads, drop) or
 * component (toolbar, list, dialogs, upload panel).
 *
 * `place` is a folder another account shared with the user: `storage` is
 * then the owner's tree, and `account` the user's own (for the header).
 */
export function Browser({ storage, segments, place: given, account }: { storage: StorageApi; segments: Segments; place?: Place; account?: StorageApi }) {
  const place = useMemo(() => given ?? ownPlace(storage.user), [given, storage.user]);
  const banner = useBanner('page', storage.client, segments.join('/'));
  const { state, sorted, sort, toggleSort, setSortTo, reload } = useListing(storage, segments);
  // Changes made elsewhere (another tab, WebDAV, a grant's other member) show up here by themselves.
  // An address the server refused as no valid path (400) stays refused: nothing to read again there.
  const refused = state.status === 'error' && state.error.status === 400;
  const reachable = useLiveFolder(storage, segments, refused ? NOTHING : reload);
  const key = segments.join('\0');
  const selection = useSelection(key, state, sorted);
  const nav = useFolderNavigation(segments, state, place);
  // A dialog or menu is of an entry of this folder: in another folder there is none, from its first render on.
  const [dialog, setDialog] = useFolderScoped<DialogState | null>(key, null);
  const [menu, setMenu] = useFolderScoped<{ entry: Entry; at: { x: number; y: number } } | null>(key, null);
  const { uploads, pick, drop, conflictDialog } = useFolderUploads(storage, segments, reload);
  // Nothing dropped lands in a folder shared for reading only.
  const { dragging, handlers: dropZone } = useFileDrop(place.writable ? drop : () => undefined);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const folderName = segments[segments.length - 1] ?? t('nav.myFiles');
  const sharedNames = useGivenGrants(storage, segments, !place.shared);
  const [view, setView] = useViewMode();
  useTitle(folderName);

  // A new folder: fresh selection, no dialog or menu; the cursor on the child we came up from, if any.
  const { reset, selectOnly } = selection;
  const { takeCameFrom, focusListOnLoad, enter } = nav;
  useEffect(() => {
    reset(takeCameFrom());
  }, [key, reset, takeCameFrom]);

  // Every (re)load follows a change made here or elsewhere: the usage figures may have moved too.
  useEffect(() => {
    if (state.status === 'ready') announceStorageChange();
  }, [state]);

  const open = useCallback((entry: Entry) => (entry.is_file ? setDialog({ kind: 'preview', entry }) : enter(entry)), [enter]);
  const { download, act: anyAct } = useEntryActions(storage, segments, open, setDialog);
  // In a shared folder: no share links of another's items; writes only with a write grant (entries listed here are
  // always inside the granted folder, never the granted root itself, so renaming or deleting one is allowed).
  // Versions: only when the server keeps them (--versions), for one's own files.
  const versionsOn = useAccount().me?.versions === true;
  const allowed = useCallback((a: MenuAction) => (a === 'versions' ? versionsOn && !place.shared : !place.shared ? true : a === 'share' ? false : a === 'rename' || a === 'move' || a === 'copy' || a === 'delete' || a === 'edit' ? place.writable : true), [place, versionsOn]);
  const act = useCallback((a: MenuAction, entries: Entry[]) => {
    if (allowed(a)) anyAct(a, entries);
  }, [allowed, anyAct]);
  const showShortcuts = useCallback(() => setDialog({ kind: 'shortcuts' }), []);
  useShortcutsKey(dialog !== null, showShortcuts);

  /** After a change: reload, then focus (and select) `name`, or just the list. */
  const afterChange = useCallback(
    (name?: string) => {
      focusListOnLoad();
      selectOnly(name);
      reload();
    },
    [focusListOnLoad, selectOnly, reload],
  );
  // Arriving from a search result (?at=<name>): the cursor on that entry, selected and scrolled into view.
  const at = useQueryParam('at');
  useEffect(() => {
    if (at !== null) afterChange(at);
  }, [key, at, afterChange]);
  const { selected, selectedEntries } = selection;
  // Rows dropped on a folder: the Move dialog's move, its result said in a toast (there is no dialog to hold an error).
  const notify = useNotify();
  const undoMove = useUndoMove(storage, segments, afterChange);
  const { setFocused } = selection;
  const openMenu = useCallback(
    (entry: Entry, at: { x: number; y: number }) => {
      setFocused(entry.name);
      setMenu({ entry, at });
    },
    [setFocused],
  );
  const drag = useMoveDrag(
    segments,
    sorted,
    selected,
    (entries, to) => {
      if (!place.writable) return;
      void moveEntries(storage, segments, entries, to).then((r) => {
        afterChange();
        if (r.done && !place.shared) rememberMove(storage.user, to);
        const text = r.error ?? r.toast;
        if (text) notify(text, r.done < entries.length ? 'error' : 'info', undoMove(r.names, to));
      });
    },
    // A finger's long press let go where it started: the row's menu, as a right-click gives.
    openMenu,
  );
  const notFound = state.status === 'error' && state.error.status === 404;
  const newFolder = () => setDialog({ kind: 'new-folder' });

  return (
    <div className="app" {...dropZone}>
      <SkipLink />
      <Banner kind="page" text={banner} />
      <AppHeader storage={account ?? storage} onShortcuts={showShortcuts} />
      <main className="browser" aria-busy={state.status === 'loading'}>
        {/* The page's heading, as every page has: the breadcrumb shows the same name to the eye. */}
        <h1 className="visually-hidden">{folderName}</h1>
        {reachable ? null : (
          <p className="connection-notice" role="status">
            <Icon name="alert" size={18} />
            Cannot reach the server. What is shown may be out of date; trying again…
          </p>
        )}
        <FolderToolbar
          segments={segments}
          place={place}
          allowed={allowed}
          count={selected.size}
          selection={selectedEntries}
          missing={notFound}
          onAction={(a) => act(a, selectedEntries)}
          onClear={selection.clear}
          onNewFolder={newFolder}
          onUploadFolder={() => folderInput.current?.click()}
          onUploadFiles={() => fileInput.current?.click()}
          view={view}
          onView={setView}
          drag={drag}
        />
        <UploadPickers fileInput={fileInput} folderInput={folderInput} onPick={pick} />

        {state.status === 'error' ? (
          <ErrorState error={state.error} notFound={notFound} onRetry={reload} />
        ) : state.status === 'loading' ? (
          <Skeleton />
        ) : sorted.length === 0 ? (
          <EmptyState onUpload={() => fileInput.current?.click()} onNewFolder={newFolder} writable={place.writable} />
        ) : view === 'grid' ? (
          <FileTiles
            storage={storage}
            folder={segments}
            entries={sorted}
            sort={sort}
            onSetSort={setSortTo}
            selected={selected}
            drag={drag}
            onSelect={selection.select}
            onOpen={open}
            onMenu={openMenu}
          />
        ) : (
          <FileList
            storage={storage}
            folder={segments}
            entries={sorted}
            selected={selected}
            focused={selection.focused}
            sort={sort}
            onSort={toggleSort}
            onSetSort={setSortTo}
            onFocusRow={selection.setFocused}
            onSelect={selection.select}
            onSelectAll={selection.selectAll}
            onClearSelection={selection.clear}
            onOpen={open}
            onMenu={openMenu}
            onDelete={() => act('delete', selection.targets())}
            onRename={() => {
              const t = selection.targets();
              if (t.length === 1) act('rename', t);
            }}
            onUp={nav.goUp}
            hrefOf={(e) => (e.is_file ? undefined : place.url([...segments, e.name]))}
            sharedNames={sharedNames}
            focusRequest={nav.focusRequest}
            drag={drag}
          />
        )}
        {state.status === 'ready' ? <FolderSummary entries={sorted} loadedIn={state.loadedIn} /> : null}
        {dragging ? <DropOverlay folderName={folderName} /> : null}
      </main>

      {menu ? (
        <RowMenu
          entry={menu.entry}
          at={menu.at}
          allowed={allowed}
          // A menu on a selected row acts on the whole selection, except for what takes one entry.
          onAction={(a) => act(a, selected.has(menu.entry.name) && a !== 'open' && a !== 'edit' && a !== 'rename' && a !== 'share' && a !== 'details' ? selectedEntries : [menu.entry])}
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
          root={place.root}
          sorted={sorted}
          afterChange={afterChange}
          download={download}
          onFocusName={selection.setFocused}
        />
      ) : null}

      {conflictDialog}
      <UploadPanel items={uploads.items} summary={uploads.summary} onCancel={uploads.cancel} onCancelAll={uploads.cancelAll} onTogglePause={uploads.togglePause} onRetry={uploads.retry} onClose={uploads.clear} />
    </div>
  );
}
