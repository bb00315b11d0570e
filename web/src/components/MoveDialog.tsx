import { useEffect, useState } from 'react';
import { messageOf } from '../api/errors';
import { isInside, sameSegments, type Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { Dialog } from './Dialog';
import { Icon, KindIcon } from './icons';
import { recentMoves } from '../lib/recent-moves';
import { t } from '../lib/i18n';

/**
 * Picks a destination folder by walking the folder tree, then moves (or, with
 * `copy`, copies) the items there. It opens at "My files", where the whole
 * tree starts (opening in the current folder showed nothing to pick inside a
 * leaf folder), with the current folder one click away and the user's recent
 * destinations. A copy may go into the folder the items are in.
 */
export function MoveDialog(props: { storage: StorageApi; from: Segments; entries: readonly Entry[]; copy?: boolean; onChoose: (to: Segments) => Promise<void>; onClose: () => void; root?: Segments }) {
  const { storage, from, entries, copy = false } = props;
  const verb = copy ? 'copy' : 'move';
  // In a folder shared with me the tree starts at the granted folder: nothing above it can be reached.
  const root = props.root ?? [];
  const rootName = root.at(-1) ?? t('nav.myFiles');
  const [at, setAt] = useState<string[]>([...root]);
  const [recent] = useState(() => (root.length ? [] : recentMoves(storage.user)));
  const [folders, setFolders] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const ctrl = new AbortController();
    setFolders(null);
    setError(null);
    storage.list(at, ctrl.signal).then(
      (list) => setFolders(list.filter((e) => !e.is_file).sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))),
      (e: unknown) => {
        if (!ctrl.signal.aborted) setError(messageOf(e));
      },
    );
    return () => ctrl.abort();
  }, [storage, at]);

  // A folder cannot go into itself or below itself.
  const movedFolders = entries.filter((e) => !e.is_file).map((e) => [...from, e.name]);
  const blocked = (path: Segments) => movedFolders.some((f) => isInside(path, f));
  const here = sameSegments(at, from) && !copy;
  const shortcuts = recent.filter((p) => (copy || !sameSegments(p, from)) && !blocked(p));
  const cannot = here ? t('move.alreadyHere') : blocked(at) ? t('move.intoItself', { verb }) : null;
  const what = entries.length === 1 ? t('move.one', { name: entries[0]?.name ?? '' }) : t('move.items', { count: entries.length });

  async function move() {
    setBusy(true);
    setError(null);
    try {
      await props.onChoose(at);
      props.onClose();
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  }

  return (
    <Dialog title={t('move.title', { verb, what })} onClose={props.onClose} wide>
      <div className="stack">
        <nav className="picker-path" aria-label={t('move.destination')}>
          <button type="button" className="crumb" onClick={() => setAt([...root])} aria-current={at.length === root.length ? 'location' : undefined}>
            <Icon name="home" size={16} /> {rootName}
          </button>
          {at.slice(root.length).map((name, i) => (
            <span key={i} className="picker-crumb">
              <Icon name="chevronRight" size={14} className="crumb-sep" />
              <button type="button" className="crumb" onClick={() => setAt(at.slice(0, root.length + i + 1))} aria-current={root.length + i === at.length - 1 ? 'location' : undefined}>
                {name}
              </button>
            </span>
          ))}
        </nav>
        {from.length > root.length || shortcuts.length > 0 ? (
          <div className="picker-shortcuts">
            {from.length > root.length ? (
              <button type="button" className="chip" aria-label={t('move.current', { name: from[from.length - 1] ?? '' })} title={[t('nav.myFiles'), ...from].join(' / ')} onClick={() => setAt([...from])}>
                <Icon name="open" size={14} /> {from[from.length - 1]} <span className="muted">{t('move.currentMark')}</span>
              </button>
            ) : null}
            {shortcuts.length > 0 ? (
              <ul aria-label={t('move.recent')}>
                {shortcuts.map((p) => (
                  <li key={p.join('/')}>
                    <button type="button" className="chip" title={[t('nav.myFiles'), ...p].join(' / ')} onClick={() => setAt([...p])}>
                      <Icon name="move" size={14} /> {p.length ? p.join(' / ') : t('nav.myFiles')}
                    </button>
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
        <ul className="picker-list" aria-label={t('move.folders')} aria-busy={folders === null}>
          {at.length > root.length ? (
            <li>
              <button type="button" className="picker-item" onClick={() => setAt(at.slice(0, -1))}>
                <Icon name="chevronLeft" size={18} /> Up one level
              </button>
            </li>
          ) : null}
          {folders === null && !error ? <li className="muted picker-note">{t('move.loading')}</li> : null}
          {folders?.length === 0 ? <li className="muted picker-note">{t('move.noFolders')}</li> : null}
          {folders?.map((f) => {
            const path = [...at, f.name];
            const off = blocked(path);
            return (
              <li key={f.name}>
                <button type="button" className="picker-item" disabled={off} onClick={() => setAt(path)} title={off ? t('move.intoItself', { verb }) : t('move.open', { name: f.name })}>
                  <KindIcon kind="folder" size={20} />
                  <span className="picker-name">{f.name}</span>
                  <Icon name="chevronRight" size={16} />
                </button>
              </li>
            );
          })}
        </ul>
        <p className="form-error" role="alert">
          {error}
        </p>
        <div className="dialog-actions">
          <span className="muted picker-hint">{cannot ?? t('move.to', { verb, where: at.length ? (at[at.length - 1] ?? '') : rootName })}</span>
          <button type="button" className="button" onClick={props.onClose}>
            {t('dialog.cancel')}
          </button>
          <button type="button" className="button primary" disabled={busy || cannot !== null} onClick={move}>
            {busy ? t('move.busy', { verb }) : t('move.here', { verb })}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
