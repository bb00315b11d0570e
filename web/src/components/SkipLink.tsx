import { t } from '../lib/i18n';
/**
 * The first stop of the Tab key on the file manager: hidden until focused,
 * it puts the focus on the file list (its current row, or the first tile),
 * past the header, the breadcrumb and the folder's actions.
 */
export function SkipLink() {
  return (
    <a
      href="#files"
      className="skip-link"
      onClick={(e) => {
        e.preventDefault();
        document.querySelector<HTMLElement>('.file-grid [role="row"][tabindex="0"], .tile-view .tile-open, .empty-state button')?.focus();
      }}
    >
      {t('skip.toList')}
    </a>
  );
}
