import { useMemo, useState } from 'react';
import type { Segments } from '../api/paths';
import { SharesApi, type Share } from '../api/shares';
import type { StorageApi } from '../api/storage';
import { Dialog } from './Dialog';
import { ShareCreated } from './ShareCreated';
import { ShareOptionsForm } from './ShareOptionsForm';
import { SharePeople } from './SharePeople';
import { t } from '../lib/i18n';

/** "Share": choose the options of a share link, then copy it or scan its QR code; and share with other accounts. */
export function ShareDialog({ storage, path, isFile, onClose }: { storage: StorageApi; path: Segments; isFile: boolean; onClose: () => void }) {
  const shares = useMemo(() => new SharesApi(storage.client, storage.user), [storage]);
  const [share, setShare] = useState<Share | null>(null);
  const name = path[path.length - 1] ?? t('nav.myFiles');
  return (
    <Dialog title={t('shareForm.title', { name })} onClose={onClose} wide>
      {share ? (
        <ShareCreated share={share} onClose={onClose} />
      ) : (
        <ShareOptionsForm isFile={isFile} onCreate={async (opts) => setShare(await shares.create(path, opts))} onCancel={onClose} />
      )}
      {path.length > 0 ? <SharePeople storage={storage} path={path} /> : null}
    </Dialog>
  );
}
