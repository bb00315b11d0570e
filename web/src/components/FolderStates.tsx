import type { ApiError } from '../api/errors';
import type { Entry } from '../api/storage';
import { onLinkClick } from '../lib/router';
import { Icon, KindIcon, type IconName } from './icons';
import { withBase } from '../lib/base';
import { t } from '../lib/i18n';

/** Placeholder rows while a folder loads, the same size as real rows (no shift when they arrive). */
export function Skeleton({ label = t('states.loadingFolder') }: { label?: string }) {
  return (
    <div className="skeleton" role="status" aria-label={label}>
      {Array.from({ length: 8 }, (_, i) => (
        <div key={i} className="skeleton-row">
          <span className="skeleton-icon" />
          <span className="skeleton-bar" style={{ width: `${30 + ((i * 37) % 45)}%` }} />
        </div>
      ))}
    </div>
  );
}

export function EmptyState({ onUpload, onNewFolder, writable = true }: { onUpload: () => void; onNewFolder: () => void; writable?: boolean }) {
  if (!writable)
    return (
      <div className="empty-state">
        <KindIcon kind="folder" size={56} />
        <h2>{t('states.empty')}</h2>
      </div>
    );
  return (
    <div className="empty-state">
      <KindIcon kind="folder" size={56} />
      <h2>{t('states.empty')}</h2>
      <p className="muted">{t('states.emptyHint')}</p>
      <div className="empty-actions">
        <button type="button" className="button primary" onClick={onUpload}>
          <Icon name="upload" size={18} /> {t('toolbar.uploadFiles')}
        </button>
        <button type="button" className="button" onClick={onNewFolder}>
          <Icon name="folderPlus" size={18} /> {t('toolbar.newFolder')}
        </button>
      </div>
    </div>
  );
}

export function ErrorState({ error, notFound, onRetry }: { error: ApiError; notFound: boolean; onRetry: () => void }) {
  return <FailedState icon="alert" title={notFound ? t('states.missing') : t('states.failed')} text={notFound ? t('states.missingHint') : error.message} home={notFound} onRetry={onRetry} />;
}

/**
 * What did not load: why, then the way on — home to My files when trying
 * again cannot help (`home`), else Try again.
 */
export function FailedState({ icon, title, text, home, onRetry }: { icon: IconName; title: string; text: string; home: boolean; onRetry: () => void }) {
  return (
    <div className="empty-state" role="alert">
      <span className="kind-icon kind-error">
        <Icon name={icon} size={56} />
      </span>
      <h2>{title}</h2>
      <p className="muted">{text}</p>
      <div className="empty-actions">
        {home ? (
          <a className="button primary" href={withBase('/browse/')} onClick={(e) => onLinkClick(e, '/browse/')}>
            <Icon name="home" size={18} /> {t('states.goHome')}
          </a>
        ) : (
          <button type="button" className="button primary" onClick={onRetry}>
            <Icon name="retry" size={18} /> {t('states.tryAgain')}
          </button>
        )}
      </div>
    </div>
  );
}

/** The line under a loaded folder: how many folders and files it holds (and, for tests, how long it took to load). */
export function FolderSummary({ entries, loadedIn }: { entries: readonly Entry[]; loadedIn: number }) {
  return (
    <div className="status-line muted" data-loaded-ms={Math.round(loadedIn)}>
      {t('states.summary', { folders: entries.filter((e) => !e.is_file).length, files: entries.filter((e) => e.is_file).length })}
    </div>
  );
}
