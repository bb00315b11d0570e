import { useEffect, useState } from 'react';
import { recentChanges, type RecentChange } from '../api/changes';
import { messageOf } from '../api/errors';
import { GrantsApi, type Grant } from '../api/grants';
import { movePath, type Segments } from '../api/paths';
import { SharesApi, type Share } from '../api/shares';
import type { Entry, StorageApi } from '../api/storage';
import { VersionsApi, type FileVersion } from '../api/trash';
import { formatAgo, formatDateTime, formatExactDate, formatSize } from '../lib/format';
import { changeLabel } from '../lib/recent-labels';
import { Dialog } from './Dialog';
import { t } from '../lib/i18n';

/** How many of the item's newest changes are shown. */
const CHANGES = 10;

type Details = { grants?: Grant[]; links?: Share[]; versions?: FileVersion[]; changes: RecentChange[] };

const When = ({ iso }: { iso: string }) => (
  <time dateTime={iso} title={formatExactDate(iso)}>
    {formatAgo(iso)}
  </time>
);

/** A grant's recipient as people read it: "bea", "group team". */
const recipient = (to: string) => (to.startsWith('group:') ? t('details.group', { name: to.slice(6) }) : to.replace(/^user:/, ''));

const linkSummary = (s: Share) =>
  [
    s.upload_only ? t('details.linkUpload') : t('details.linkView'),
    s.has_password ? t('details.linkPassword') : '',
    s.expires_at ? t('details.linkExpires', { date: formatDateTime(s.expires_at) }) : t('details.linkNeverExpires'),
    s.max_downloads !== null ? t('details.linkDownloads', { done: s.downloads, count: s.max_downloads }) : '',
  ]
    .filter(Boolean)
    .join(' · ');

/**
 * One item's details: size and time, and — of one's own items — who it is
 * shared with and how (grants and links) and its earlier versions (with
 * --versions); of any, its newest changes from the change feed. Each part
 * loads on its own; one that fails says so and the rest still show.
 */
export function DetailsDialog({ storage, folder, entry, own, versionsOn, onClose }: { storage: StorageApi; folder: Segments; entry: Entry; own: boolean; versionsOn: boolean; onClose: () => void }) {
  const path = [...folder, entry.name];
  const [details, setDetails] = useState<Details | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = path.join('/');

  useEffect(() => {
    const ctl = new AbortController();
    const signal = ctl.signal;
    const here = movePath(storage.user, path);
    Promise.all([
      own ? new GrantsApi(storage.client, storage.user).of(path, signal) : undefined,
      own ? new SharesApi(storage.client, storage.user).list(signal).then((all) => all.filter((s) => s.path === here)) : undefined,
      own && versionsOn && entry.is_file ? new VersionsApi(storage).list(path, signal) : undefined,
      recentChanges(storage.client, { path: here, limit: CHANGES, signal }),
    ]).then(
      ([grants, links, versions, changes]) => {
        if (!signal.aborted) setDetails({ grants, links, versions, changes });
      },
      (e: unknown) => {
        if (!signal.aborted) setError(messageOf(e));
      },
    );
    return () => ctl.abort();
    // The item is named by its path (`key`): the arrays are rebuilt each render.
  }, [storage, key, own, versionsOn, entry.is_file]);

  return (
    <Dialog title={t('details.title', { name: entry.name })} onClose={onClose} className="details-dialog">
      <dl className="details-facts">
        <dt>{t('shareItem.kind')}</dt>
        <dd>{entry.is_file ? t('shareItem.file') : t('list.folder')}</dd>
        {entry.is_file ? (
          <>
            <dt>{t('details.size')}</dt>
            <dd>{formatSize(entry.size)}</dd>
          </>
        ) : null}
        <dt>{t('details.modified')}</dt>
        <dd>
          <time dateTime={entry.modified} title={formatAgo(entry.modified)}>
            {formatDateTime(entry.modified)}
          </time>
        </dd>
        <dt>{t('details.location')}</dt>
        <dd>{[own ? t('nav.myFiles') : storage.user, ...folder].join(' / ')}</dd>
      </dl>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : !details ? (
        <p className="muted" role="status">
          {t('common.loading')}
        </p>
      ) : (
        <>
          {details.grants ? (
            <section className="details-section">
              <h3>{t('people.sharedWith')}</h3>
              {details.grants.length ? (
                <ul aria-label={t('people.sharedWith')} className="details-list">
                  {details.grants.map((g) => (
                    <li key={g.id}>
                      <span>{recipient(g.to)}</span> · {g.permission === 'write' ? t('people.canEdit') : t('people.canView')}
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted">{t('details.nobody')}</p>
              )}
            </section>
          ) : null}
          {details.links ? (
            <section className="details-section">
              <h3>{t('details.links')}</h3>
              {details.links.length ? (
                <ul aria-label={t('details.links')} className="details-list">
                  {details.links.map((s) => (
                    <li key={s.id}>{linkSummary(s)}</li>
                  ))}
                </ul>
              ) : (
                <p className="muted">{t('details.noLinks')}</p>
              )}
            </section>
          ) : null}
          {details.versions ? (
            <section className="details-section">
              <h3>{t('action.versions')}</h3>
              {details.versions.length ? (
                <ul aria-label={t('details.earlierVersions')} className="details-list">
                  {details.versions.map((v) => (
                    <li key={v.id}>
                      {formatSize(v.size)} · <When iso={v.modified} />
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted">{t('details.noVersions')}</p>
              )}
            </section>
          ) : null}
          <section className="details-section">
            <h3>{t('details.changes')}</h3>
            {details.changes.length ? (
              <ul aria-label={t('details.changes')} className="details-list">
                {details.changes.map((c, i) => (
                  <li key={i}>
                    {changeLabel(c.type)}
                    {c.path !== movePath(storage.user, path) ? ` · ${c.path.split('/').slice(2).join('/')}` : ''} · <When iso={c.at} />
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">{t('details.noChanges')}</p>
            )}
          </section>
        </>
      )}
    </Dialog>
  );
}
