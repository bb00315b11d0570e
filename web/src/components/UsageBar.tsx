import { useEffect, useState } from 'react';
import type { ApiClient } from '../api/client';
import { fetchUsage, type Usage } from '../api/usage';
import { coalesce } from '../lib/coalesce';
import { onStorageChange } from '../lib/usage-events';
import { usageView } from '../lib/usage-bar';
import { t } from '../lib/i18n';

/** How long after a change the figures are fetched again (one request for the changes meanwhile). */
const REFRESH_DELAY_MS = 300;

/** Storage used (of the quota, as a bar, when there is one), refreshed after every change to storage. */
export function UsageBar({ client }: { client: ApiClient }) {
  const [usage, setUsage] = useState<Usage | null>(null);
  useEffect(() => {
    let ctrl = new AbortController();
    const load = () => {
      ctrl.abort();
      ctrl = new AbortController();
      const signal = ctrl.signal;
      fetchUsage(client, signal).then(
        (u) => !signal.aborted && setUsage(u),
        () => undefined, // The bar is a courtesy: it keeps its last figures when the server cannot answer.
      );
    };
    load();
    const refresh = coalesce(load, REFRESH_DELAY_MS);
    const stop = onStorageChange(() => refresh.request());
    return () => {
      stop();
      refresh.cancel();
      ctrl.abort();
    };
  }, [client]);
  if (!usage) return null;
  const view = usageView(usage.used, usage.quota);
  return (
    <div className={`usage usage-${view.level}`} data-testid="usage" title={view.label}>
      {view.fraction !== undefined ? (
        <span className="usage-bar" role="progressbar" aria-label={t('usage.bar')} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(view.fraction * 100)} aria-valuetext={view.label}>
          <span className="usage-fill" style={{ width: `${(view.fraction * 100).toFixed(1)}%` }} />
        </span>
      ) : null}
      <span className="usage-label">{view.label}</span>
      {/* A phone's header has room for the figure alone; the whole sentence stays for screen readers. */}
      <span className="usage-short" aria-hidden="true">
        {view.short}
      </span>
    </div>
  );
}
