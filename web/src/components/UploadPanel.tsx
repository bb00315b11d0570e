import { useState } from 'react';
import { formatSize } from '../lib/format';
import { uploadHeadline } from '../lib/upload-progress';
import { kindOf } from '../lib/file-kind';
import { Icon, KindIcon } from './icons';
import type { UploadItem, UploadSummary } from './useUploads';
import { t } from '../lib/i18n';

type Props = {
  items: readonly UploadItem[];
  summary: UploadSummary;
  onCancel: (id: number) => void;
  onCancelAll: () => void;
  onTogglePause: (id: number) => void;
  onRetry: (id: number) => void;
  onClose: () => void;
};

/** Rows shown at most: a 5,000-file folder upload must not repaint 5,000 rows a frame. */
const MAX_ROWS = 150;

/** In-flight and failed first, then the rest in order, capped. */
function visibleRows(items: readonly UploadItem[]): { rows: readonly UploadItem[]; hidden: number } {
  if (items.length <= MAX_ROWS) return { rows: items, hidden: 0 };
  const first = items.filter((i) => i.status === 'uploading' || i.status === 'paused' || i.status === 'error');
  const rest = items.filter((i) => i.status !== 'uploading' && i.status !== 'paused' && i.status !== 'error');
  const rows = [...first, ...rest].slice(0, MAX_ROWS);
  return { rows, hidden: items.length - rows.length };
}

/** The floating upload panel: total progress and speed, and each file with its own bar, final name or error. */
export function UploadPanel({ items, summary, onCancel, onCancelAll, onTogglePause, onRetry, onClose }: Props) {
  const [collapsed, setCollapsed] = useState(false);
  if (items.length === 0) return null;
  const { title, detail, percent: pct } = uploadHeadline(summary);
  const running = summary.active > 0;
  return (
    <section className="upload-panel" aria-label={t('upload.panel')} data-state={running ? 'running' : 'idle'}>
      <header className="upload-head">
        <div className="upload-title">
          <strong>{title}</strong>
          {detail ? (
            <span className="muted upload-stats" aria-live="off">
              {detail}
            </span>
          ) : null}
        </div>
        {running ? (
          <button type="button" className="button small ghost" onClick={onCancelAll}>
            {t('upload.cancelAll')}
          </button>
        ) : null}
        <button type="button" className="icon-button" aria-label={collapsed ? t('upload.showList') : t('upload.hideList')} aria-expanded={!collapsed} onClick={() => setCollapsed((c) => !c)}>
          <Icon name={collapsed ? 'chevronUp' : 'chevronDown'} />
        </button>
        {!running ? (
          <button type="button" className="icon-button" aria-label={t('upload.close')} onClick={onClose}>
            <Icon name="close" />
          </button>
        ) : null}
      </header>
      <div className="progress total" role="progressbar" aria-label={t('upload.totalProgress')} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
        <div style={{ width: `${pct}%` }} />
      </div>
      {collapsed ? null : (
        <ul className="upload-list">
          {visibleRows(items).rows.map((item) => (
            <UploadRow key={item.id} item={item} onCancel={onCancel} onTogglePause={onTogglePause} onRetry={onRetry} />
          ))}
          {visibleRows(items).hidden > 0 ? <li className="muted upload-more">{t('upload.andMore', { count: visibleRows(items).hidden })}</li> : null}
        </ul>
      )}
    </section>
  );
}

type RowProps = { item: UploadItem; onCancel: (id: number) => void; onTogglePause: (id: number) => void; onRetry: (id: number) => void };

function UploadRow({ item, onCancel, onTogglePause, onRetry }: RowProps) {
  const size = item.file.size;
  const pct = item.status === 'done' ? 100 : size > 0 ? Math.floor((item.loaded / size) * 100) : 0;
  const where = item.folder.length ? item.folder.join(' / ') : t('nav.myFiles');
  const renamed = item.status === 'done' && item.finalName && item.finalName !== item.file.name;
  let status: string;
  switch (item.status) {
    case 'queued':
      status = t('upload.waiting', { size: formatSize(size) });
      break;
    case 'uploading':
      status = t('upload.percentOf', { percent: pct, size: formatSize(size) });
      break;
    case 'paused':
      status = t('upload.pausedAt', { percent: pct, size: formatSize(size) });
      break;
    case 'done':
      status = renamed ? t('upload.savedAs', { name: item.finalName ?? '' }) : item.overwrite ? t('upload.replaced', { size: formatSize(size) }) : t('upload.uploaded', { size: formatSize(size) });
      break;
    case 'cancelled':
      status = t('upload.cancelled');
      break;
    default:
      status = item.error ?? t('upload.failed');
  }
  return (
    <li className={`upload-item status-${item.status}`} data-name={item.file.name}>
      <KindIcon kind={kindOf(item.file.name, true)} size={20} />
      <div className="upload-main">
        <div className="upload-name" title={`${where} / ${item.file.name}`}>
          {item.file.name}
          <span className="muted upload-where"> {t('upload.inFolder', { folder: where })}</span>
        </div>
        {item.status === 'uploading' || item.status === 'queued' || item.status === 'paused' ? (
          <div className="progress" role="progressbar" aria-label={t('upload.progressOf', { name: item.file.name })} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
            <div style={{ width: `${pct}%` }} />
          </div>
        ) : null}
        <div className={`upload-status${item.status === 'error' ? ' error-text' : ''}${renamed ? ' renamed' : ''}`}>{status}</div>
      </div>
      {item.resumable && (item.status === 'uploading' || item.status === 'paused') ? (
        <button type="button" className="icon-button small" aria-label={item.status === 'paused' ? t('upload.resumeOf', { name: item.file.name }) : t('upload.pauseOf', { name: item.file.name })} onClick={() => onTogglePause(item.id)}>
          <Icon name={item.status === 'paused' ? 'play' : 'pause'} size={16} />
        </button>
      ) : null}
      {item.status === 'uploading' || item.status === 'queued' || item.status === 'paused' ? (
        <button type="button" className="icon-button small" aria-label={t('upload.cancelOf', { name: item.file.name })} onClick={() => onCancel(item.id)}>
          <Icon name="close" size={16} />
        </button>
      ) : item.status === 'error' || item.status === 'cancelled' ? (
        <button type="button" className="icon-button small" aria-label={t('upload.retryOf', { name: item.file.name })} onClick={() => onRetry(item.id)}>
          <Icon name="retry" size={16} />
        </button>
      ) : item.status === 'done' ? (
        <span className="done-mark" aria-hidden="true">
          <Icon name="check" size={18} />
        </span>
      ) : null}
    </li>
  );
}
