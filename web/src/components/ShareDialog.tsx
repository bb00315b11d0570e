import { useEffect, useRef, useState } from 'react';
import { messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';
import { formatDuration, formatExactDate } from '../lib/format';
import { Dialog } from './Dialog';
import { Icon } from './icons';
import { publicUrlOf } from '../lib/base';

const LIFETIMES: { label: string; seconds: number | undefined }[] = [
  { label: 'As long as the server allows', seconds: undefined },
  { label: '1 hour', seconds: 3600 },
  { label: '10 minutes', seconds: 600 },
];

/** Copies text, with a fallback for plain-http pages where navigator.clipboard does not exist. */
export async function copyText(text: string, input?: HTMLInputElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Fall through to the selection-based copy.
  }
  if (input) {
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
  return false;
}

/** "Copy link": a path-token URL that opens the file without signing in, and how long it works. */
export function ShareDialog({ storage, path, onClose }: { storage: StorageApi; path: Segments; onClose: () => void }) {
  const [choice, setChoice] = useState(0);
  const [link, setLink] = useState<{ url: string; expiresAt: Date } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const name = path[path.length - 1] ?? '';

  useEffect(() => {
    let live = true;
    setLink(null);
    setError(null);
    setCopied(null);
    storage.makeToken(path, LIFETIMES[choice]?.seconds).then(
      async ({ token, expiresAt }) => {
        if (!live) return;
        const url = publicUrlOf(storage.tokenUrl(path, token));
        setLink({ url, expiresAt });
        setCopied((await copyText(url)) ? 'yes' : 'no');
      },
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [storage, path, choice]);

  const seconds = link ? (link.expiresAt.getTime() - Date.now()) / 1000 : 0;
  return (
    <Dialog title={`Share “${name}”`} onClose={onClose} wide>
      <div className="stack">
        <p>Anyone with this link can open the file without signing in.</p>
        <div className="copy-row">
          <input ref={input} className="share-url" readOnly value={link?.url ?? 'Creating link…'} aria-label="Share link" onFocus={(e) => e.currentTarget.select()} />
          <button
            type="button"
            className="button primary"
            disabled={!link}
            onClick={async () => link && setCopied((await copyText(link.url, input.current)) ? 'yes' : 'no')}
          >
            <Icon name="link" size={18} /> Copy link
          </button>
        </div>
        <p className="share-status" role="status">
          {error ? <span className="error-text">{error}</span> : link ? (
            <>
              {copied === 'yes' ? <strong>Link copied. </strong> : copied === 'no' ? <strong>Select the link and copy it. </strong> : null}
              <span className="share-validity">
                Valid for {formatDuration(seconds)}, until {formatExactDate(link.expiresAt)}.
              </span>
            </>
          ) : null}
        </p>
        <label className="field inline">
          <span>Link works for</span>
          <select value={choice} onChange={(e) => setChoice(Number(e.target.value))}>
            {LIFETIMES.map((l, i) => (
              <option key={l.label} value={i}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
        <p className="muted small">A link cannot be withdrawn one by one: it stops at its expiry, or for all links at once when you change your password.</p>
      </div>
    </Dialog>
  );
}
