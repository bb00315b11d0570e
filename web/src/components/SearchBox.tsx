import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { messageOf } from '../api/errors';
import { browseUrl } from '../api/paths';
import { resultPlace, searchNames, type SearchAnswer, type SearchResult } from '../api/search';
import type { StorageApi } from '../api/storage';
import { kindOf } from '../lib/file-kind';
import { navigate } from '../lib/router';
import { usePhone } from '../lib/phone';
import { Icon, KindIcon } from './icons';
import { t } from '../lib/i18n';

/** Typing pauses this long before a search is sent. */
const DEBOUNCE_MS = 180;

type State = { status: 'idle' } | { status: 'loading' } | { status: 'ready'; answer: SearchAnswer } | { status: 'error'; message: string };

/** Where a result opens: a folder itself; a file in its folder, with the cursor on it (?at=). */
export function resultHref(r: SearchResult): string {
  const { folder, name } = resultPlace(r.path);
  if (!r.is_file) return browseUrl([...folder, name]);
  return `${browseUrl(folder)}?at=${encodeURIComponent(name)}`;
}

/** The page-wide "/" key that focuses the search box, unless the user is typing in a field or a dialog is open. */
function useSlashKey(input: React.RefObject<HTMLInputElement | null>) {
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement;
      if (target.closest('input, textarea, select, [contenteditable="true"]') || document.querySelector('[role="dialog"]')) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [input]);
}

/**
 * The search box of the header: names of the signed-in user's files and
 * folders as they type (GET /api/search), each result with its folder;
 * choosing one opens its folder with the cursor on it. Keyboard: "/" to
 * focus, ↑/↓ to move, Enter to open, Escape to close.
 */
export function SearchBox({ storage }: { storage: StorageApi }) {
  const input = useRef<HTMLInputElement>(null);
  const [q, setQ] = useState('');
  const phone = usePhone();
  const [state, setState] = useState<State>({ status: 'idle' });
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const listId = useId();
  const closing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useSlashKey(input);
  useEffect(() => () => clearTimeout(closing.current), []);

  useEffect(() => {
    const text = q.trim();
    if (text === '') {
      setState({ status: 'idle' });
      return;
    }
    const abort = new AbortController();
    setState({ status: 'loading' });
    const timer = setTimeout(() => {
      searchNames(storage.client, text, abort.signal).then(
        (answer) => {
          setState({ status: 'ready', answer });
          setActive(0);
        },
        (e: unknown) => {
          if (!abort.signal.aborted) setState({ status: 'error', message: messageOf(e) });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [q, storage.client]);

  const results = state.status === 'ready' ? state.answer.results : [];
  const choose = (r: SearchResult) => {
    setOpen(false);
    input.current?.blur();
    navigate(resultHref(r));
  };

  function onKeyDown(e: KeyboardEvent<HTMLInputElement>) {
    if (e.key === 'Escape') {
      e.preventDefault();
      if (open && q !== '') setOpen(false);
      else {
        setQ('');
        input.current?.blur();
      }
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      if (results.length > 0) setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : results.length - 1)) % results.length);
    } else if (e.key === 'Enter') {
      const r = results[active];
      if (r) {
        e.preventDefault();
        choose(r);
      }
    }
  }

  const showPanel = open && q.trim() !== '';
  return (
    <div className="search-box" role="search">
      <Icon name="search" size={18} className="search-icon" />
      <input
        ref={input}
        type="search"
        className="search-input"
        // A phone's box has room for one short word; the "/" shortcut is shown (and used) with a keyboard.
        placeholder={phone ? t('search.short') : t('search.placeholder')}
        aria-label={t('search.label')}
        role="combobox"
        aria-expanded={showPanel}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={showPanel && results[active] ? `${listId}-${active}` : undefined}
        value={q}
        onChange={(e) => {
          setQ(e.target.value);
          setOpen(true);
        }}
        onFocus={() => {
          // Focus back before the blur's close ran (a quick "/" after choosing): stay open.
          clearTimeout(closing.current);
          setOpen(true);
        }}
        // Later than a click on a result, which must still land.
        onBlur={() => {
          closing.current = setTimeout(() => setOpen(false), 150);
        }}
        onKeyDown={onKeyDown}
      />
      {!phone && <kbd className="search-key" aria-hidden="true">/</kbd>}
      {showPanel ? (
        <div className="search-panel">
          {state.status === 'loading' ? <p className="search-note muted">{t('search.searching')}</p> : null}
          {state.status === 'error' ? <p className="search-note error-text">{state.message}</p> : null}
          {state.status === 'ready' && results.length === 0 ? <p className="search-note muted">{t('search.none', { q: q.trim() })}</p> : null}
          <ul id={listId} role="listbox" aria-label={t('search.results')} className="search-results">
            {results.map((r, i) => {
              const { folder } = resultPlace(r.path);
              return (
                <li
                  key={r.path}
                  id={`${listId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  className="search-result"
                  data-path={r.path}
                  onMouseEnter={() => setActive(i)}
                  onMouseDown={(e) => e.preventDefault()}
                  onClick={() => choose(r)}
                >
                  <KindIcon kind={kindOf(r.name, r.is_file)} size={20} />
                  <span className="search-result-text">
                    <span className="search-result-name">{r.name}</span>
                    <span className="search-result-folder muted small">{[t('nav.myFiles'), ...folder].join(' / ')}</span>
                  </span>
                </li>
              );
            })}
          </ul>
          {state.status === 'ready' && state.answer.truncated ? <p className="search-note muted small">{t('search.truncated')}</p> : null}
        </div>
      ) : null}
    </div>
  );
}
