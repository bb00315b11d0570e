import { formatSize } from './format';
import { t } from './i18n';

/**
 * What the usage bar shows: a fraction (0–1) of the quota used and its
 * label, or only the bytes used when there is no quota; `short` is the
 * figure alone, for a phone's header ("1.2 GB", "93%"). `level` picks the
 * colour: full at or past the quota, warn from 90 %.
 */
export function usageView(used: number, quota: number | null): { label: string; short: string; fraction: number | undefined; level: 'ok' | 'warn' | 'full' } {
  if (quota === null) return { label: t('usage.used', { used: formatSize(used) }), short: formatSize(used), fraction: undefined, level: 'ok' };
  const fraction = quota === 0 ? 1 : Math.min(1, used / quota);
  const level = used >= quota ? 'full' : fraction >= 0.9 ? 'warn' : 'ok';
  return { label: t('usage.usedOf', { used: formatSize(used), quota: formatSize(quota) }), short: t('upload.percent', { percent: Math.floor(fraction * 100) }), fraction, level };
}
