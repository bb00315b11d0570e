import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError, messageOf } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { extensionOf, isEditable, kindOf } from '../lib/file-kind';
import { hasThumbnail } from '../api/thumbnails';
import { formatDate, formatSize } from '../lib/format';
import { Dialog } from './Dialog';
import { Icon, KindIcon } from './icons';
import { MarkdownView } from './MarkdownView';
import { t } from '../lib/i18n';

/** Text previews read at most this much (a Range request), so a 2 GB log does not come down. */
export const TEXT_PREVIEW_BYTES = 512 * 1024;
const PREVIEW_TOKEN_SECONDS = 3600;

/** A path token for previews: an hour, or the server's own limit if that is shorter. */
async function previewToken(storage: StorageApi, path: Segments): Promise<string> {
  try {
    return (await storage.makeToken(path, PREVIEW_TOKEN_SECONDS)).token;
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) return (await storage.makeToken(path)).token;
    throw e;
  }
}

type Props = {
  storage: StorageApi;
  folder: Segments;
  entry: Entry;
  /** Files of the folder in list order, for previous / next. */
  siblings: readonly Entry[];
  onNavigate: (entry: Entry) => void;
  onDownload: (entry: Entry) => void;
  onShare: (entry: Entry) => void;
  /** Opens the text editor (offered for text files small enough to edit). */
  onEdit?: (entry: Entry) => void;
  onClose: () => void;
};

/** What the gallery shows as a picture: images, and a video's frame and a PDF's first page (drawn by the server). */
const inGallery = (name: string): boolean => {
  const kind = kindOf(name, true);
  return kind === 'image' || kind === 'video' || kind === 'pdf';
};

/** The files previous / next step through: from a picture, the folder's pictures only (a gallery); else every file. */
export function galleryOf(siblings: readonly Entry[], open: Entry): readonly Entry[] {
  if (!inGallery(open.name)) return siblings;
  return siblings.filter((e) => inGallery(e.name));
}

/**
 * Previews images, video, audio, PDF (through path-token URLs, so the browser
 * loads them itself) and text, Markdown and code (size-capped); anything else
 * offers a download. Images, videos and PDFs form a gallery: arrow keys, swipe,
 * Escape. Images show as 1024 px thumbnails (quick, EXIF-rotated), with the original a
 * click away; a video shows its frame until played; a PDF its first page, with the
 * whole PDF a click away (a viewer in the gallery would take the arrow keys).
 */
export function PreviewDialog({ storage, folder, entry, siblings: allFiles, onNavigate, onDownload, onShare, onEdit, onClose }: Props) {
  const kind = kindOf(entry.name, true);
  const [src, setSrc] = useState<string | null>(null);
  const [text, setText] = useState<{ text: string; truncated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [original, setOriginal] = useState(false);
  // A PDF whose first page the server cannot draw (broken, or no poppler) is shown in the browser's viewer.
  const [viewer, setViewer] = useState(false);
  const siblings = galleryOf(allFiles, entry);
  const index = siblings.findIndex((s) => s.name === entry.name);
  const prev = index > 0 ? siblings[index - 1] : undefined;
  const next = index >= 0 && index < siblings.length - 1 ? siblings[index + 1] : undefined;
  const touchX = useRef<number | null>(null);
  // SVG stays vector; what the server cannot draw (BMP, ICO) is shown as it is.
  const viaThumbnail = kind === 'image' && hasThumbnail(entry.name) && extensionOf(entry.name) !== 'svg' && !original;

  useEffect(() => {
    const ctrl = new AbortController();
    const path = [...folder, entry.name];
    setSrc(null);
    setText(null);
    setError(null);
    setOriginal(false);
    setViewer(false);
    const fail = (e: unknown) => !ctrl.signal.aborted && setError(messageOf(e));
    if (kind === 'text') {
      previewToken(storage, path)
        .then((token) => storage.readText(storage.tokenUrl(path, token), TEXT_PREVIEW_BYTES, ctrl.signal))
        .then((t) => !ctrl.signal.aborted && setText(t), fail);
    } else if (kind === 'image' || kind === 'video' || kind === 'audio' || kind === 'pdf') {
      previewToken(storage, path).then((token) => !ctrl.signal.aborted && setSrc(storage.tokenUrl(path, token)), fail);
    }
    return () => ctrl.abort();
  }, [storage, folder, entry.name, kind]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.closest('video, audio, input, select, textarea')) return;
      if (e.key === 'ArrowLeft' && prev) onNavigate(prev);
      if (e.key === 'ArrowRight' && next) onNavigate(next);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [prev, next, onNavigate]);

  const header = (
    <div className="preview-actions">
      <button type="button" className="icon-button" aria-label={t('preview.previous')} disabled={!prev} onClick={() => prev && onNavigate(prev)}>
        <Icon name="chevronLeft" />
      </button>
      <button type="button" className="icon-button" aria-label={t('preview.next')} disabled={!next} onClick={() => next && onNavigate(next)}>
        <Icon name="chevronRight" />
      </button>
      {onEdit && isEditable(entry) ? (
        <button type="button" className="icon-button" aria-label={t('action.edit')} title={t('action.edit')} onClick={() => onEdit(entry)}>
          <Icon name="pencil" />
        </button>
      ) : null}
      <button type="button" className="icon-button" aria-label={t('action.share')} title={t('action.share')} onClick={() => onShare(entry)}>
        <Icon name="link" />
      </button>
      <button type="button" className="icon-button" aria-label={t('action.download')} title={t('action.download')} onClick={() => onDownload(entry)}>
        <Icon name="download" />
      </button>
    </div>
  );

  const position = siblings.length > 1 && inGallery(entry.name) ? `${t('preview.position', { at: index + 1, of: siblings.length })} · ` : '';
  /**
   * A picture of the gallery, with its place and a way to the whole file; swiped left and right on a
   * touch screen, but for a video, whose time line a finger drags sideways.
   */
  const galleryItem = (media: ReactNode, note: ReactNode, swipe = true) => (
    <div
      className="preview-gallery"
      data-index={index}
      onTouchStart={(e) => (touchX.current = swipe ? (e.touches[0]?.clientX ?? null) : null)}
      onTouchEnd={(e) => {
        const x0 = touchX.current;
        touchX.current = null;
        const x1 = e.changedTouches[0]?.clientX;
        if (x0 === null || x1 === undefined || Math.abs(x1 - x0) < 40) return;
        const to = x1 < x0 ? next : prev;
        if (to) onNavigate(to);
      }}
    >
      {media}
      <p className="muted small preview-note">
        {position}
        {note}
      </p>
    </div>
  );

  let body;
  if (error) body = <PreviewMessage entry={entry} text={error} onDownload={onDownload} error />;
  else if (!src && (kind === 'image' || kind === 'video' || kind === 'audio' || kind === 'pdf')) body = <Loading />;
  else if (src && kind === 'image')
    body = galleryItem(
      <img
        className="preview-media"
        src={viaThumbnail ? `${src}&thumbnail=1024` : src}
        alt={entry.name}
        // No thumbnail (a corrupt or huge image): the browser may still show the original.
        onError={() => viaThumbnail && setOriginal(true)}
      />,
      <a href={src} target="_blank" rel="noopener noreferrer">
        {t('preview.original')}
      </a>,
    );
  else if (src && kind === 'video')
    body = galleryItem(
      <video className="preview-media" src={src} poster={hasThumbnail(entry.name) ? `${src}&thumbnail=1024` : undefined} controls autoPlay={false} preload="metadata" />,
      null,
      false,
    );
  else if (src && kind === 'pdf' && !viewer && hasThumbnail(entry.name))
    body = galleryItem(
      // A first page the server cannot draw (a broken PDF, no poppler) opens the viewer instead.
      <img className="preview-media preview-page" src={`${src}&thumbnail=1024`} alt={entry.name} onError={() => setViewer(true)} />,
      <a href={src} target="_blank" rel="noopener noreferrer">
        {t('preview.openPdf')}
      </a>,
    );
  else if (src && kind === 'audio') body = <audio className="preview-audio" src={src} controls preload="metadata" />;
  else if (src && kind === 'pdf')
    body = (
      <div className="preview-pdf">
        <iframe title={entry.name} src={src} />
        <p className="muted small">
          {t('share.js.pdfHintBefore')}
          <a href={src} target="_blank" rel="noopener noreferrer">
            {t('share.js.pdfHintLink')}
          </a>
          {t('share.js.pdfHintAfter')}
        </p>
      </div>
    );
  else if (kind === 'text')
    body = text ? (
      <div className="preview-text-wrap">
        {text.truncated ? <p className="preview-note">{t('preview.truncated', { shown: formatSize(TEXT_PREVIEW_BYTES), size: formatSize(entry.size) })}</p> : null}
        {['md', 'markdown'].includes(extensionOf(entry.name)) ? <MarkdownView source={text.text} /> : <pre className="preview-text">{text.text}</pre>}
      </div>
    ) : (
      <Loading />
    );
  else body = <PreviewMessage entry={entry} text={t('preview.none')} onDownload={onDownload} />;

  return (
    <Dialog
      title={
        <span className="preview-title">
          <KindIcon kind={kind} size={20} />
          <span className="preview-name">{entry.name}</span>
          <span className="muted small preview-meta">
            {formatSize(entry.size)} · {formatDate(entry.modified)}
          </span>
        </span>
      }
      headerExtra={header}
      onClose={onClose}
      className="preview-dialog"
      wide
    >
      <div className={`preview-body preview-kind-${kind}`}>{body}</div>
    </Dialog>
  );
}

function Loading() {
  return (
    <div className="preview-loading" role="status">
      <span className="spinner" aria-hidden="true" /> {t('preview.loading')}
    </div>
  );
}

function PreviewMessage({ entry, text, onDownload, error }: { entry: Entry; text: string; onDownload: (e: Entry) => void; error?: boolean }) {
  return (
    <div className="preview-message">
      <KindIcon kind={kindOf(entry.name, true)} size={48} />
      <p className={error ? 'error-text' : undefined}>{text}</p>
      <button type="button" className="button primary" onClick={() => onDownload(entry)}>
        <Icon name="download" size={18} /> {t('preview.downloadSize', { size: formatSize(entry.size) })}
      </button>
    </div>
  );
}
