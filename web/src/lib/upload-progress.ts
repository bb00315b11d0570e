import { formatSize, formatSpeed } from './format';
import { t } from './i18n';

/** The upload queue in figures (useUploads' summary): files by state, bytes of the files not cancelled, speed. */
export type UploadFigures = {
  /** Files not cancelled. */
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  readonly cancelled: number;
  /** Queued, sending or paused. */
  readonly active: number;
  readonly loaded: number;
  readonly bytes: number;
  readonly speed: number;
};

/**
 * What the upload panel's head says. While files are going: how many of how
 * many files are done as well as the share of the bytes (200 small files and
 * a big one are "80 of 204 files" long before their bytes reach 1 %);
 * the bar follows the bytes, or the files when there are no bytes to count.
 * Afterwards: what became of them, cancelled ones included.
 */
export function uploadHeadline(s: UploadFigures): { title: string; detail: string; percent: number } {
  const byBytes = s.bytes > 0 ? s.loaded / s.bytes : s.total > 0 ? s.done / s.total : 1;
  const percent = Math.min(100, Math.floor(byBytes * 100));
  if (s.active > 0) {
    const share = percent === 0 && s.loaded > 0 ? t('upload.underOnePercent') : t('upload.percent', { percent });
    const detail = [t('upload.filesDone', { done: s.done, total: s.total }), share, t('upload.bytesOf', { loaded: formatSize(s.loaded), total: formatSize(s.bytes) }), ...(s.speed > 0 ? [formatSpeed(s.speed)] : [])].join(' · ');
    return { title: t('upload.uploading', { count: s.active }), detail, percent };
  }
  const rest = [...(s.failed ? [t('upload.nFailed', { count: s.failed })] : []), ...(s.cancelled ? [t('upload.nCancelled', { count: s.cancelled })] : [])];
  let title: string;
  if (s.done > 0) title = [t('upload.complete', { count: s.done }), ...rest].join(', ');
  else if (s.failed > 0) title = [t('upload.failedTitle', { count: s.failed }), ...rest.slice(1)].join(', ');
  else title = s.cancelled > 0 ? t('upload.cancelledTitle', { count: s.cancelled }) : t('upload.nothing');
  return { title, detail: s.done > 0 ? t('upload.inTotal', { size: formatSize(s.loaded) }) : '', percent: s.done > 0 ? percent : 0 };
}
