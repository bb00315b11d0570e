import type { ReactNode } from 'react';
import type { ApiError } from '../api/errors';
import { Icon, type IconName } from './icons';
import { t } from '../lib/i18n';

/** Placeholder lines while a section's list loads, about as tall as the list will be. */
export function ListSkeleton({ label, rows = 2 }: { label: string; rows?: number }) {
  return (
    <div className="list-skeleton" role="status" aria-label={label}>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="skeleton-row">
          <span className="skeleton-icon" />
          <span className="skeleton-bar" style={{ width: `${35 + ((i * 29) % 40)}%` }} />
        </div>
      ))}
    </div>
  );
}

/** A list that could not be read (`title`: "Your sessions could not be loaded"): why, and Try again. */
export function ListError({ title, error, onRetry }: { title: string; error: ApiError; onRetry: () => void }) {
  return (
    <div className="section-state" role="alert">
      <span className="kind-icon kind-error">
        <Icon name="alert" size={32} />
      </span>
      <div>
        <p className="section-state-title">{title}</p>
        <p className="muted small">{error.message}</p>
      </div>
      <button type="button" className="button small" onClick={onRetry}>
        <Icon name="retry" size={16} /> {t('states.tryAgain')}
      </button>
    </div>
  );
}

/** Nothing in a list yet: what it is for. */
export function ListEmpty({ icon, title, text, children }: { icon: IconName; title: string; text: string; children?: ReactNode }) {
  return (
    <div className="section-state empty">
      <span className="kind-icon kind-folder">
        <Icon name={icon} size={32} />
      </span>
      <div>
        <p className="section-state-title">{title}</p>
        <p className="muted small">{text}</p>
      </div>
      {children}
    </div>
  );
}
