import { browseUrl } from '../api/paths';
import { withMeUrl } from './place';
import type { RecentFile } from './recent';
import { t } from './i18n';

/** What a change did, in a word, in the UI's language. */
export const changeLabel = (type: RecentFile['type'] | 'deleted'): string => t(`change.${type}`);

/** Where a file is, as the user names it: "My files / Work" for their own, "bea / team" for what bea shares. */
export const placeOf = (f: Pick<RecentFile, 'owner' | 'folder'>, me: string): string => [f.owner === me ? t('nav.myFiles') : f.owner, ...f.folder].join(' / ');

/** The app's address of the folder with the cursor on the file. */
export const openUrl = (f: Pick<RecentFile, 'owner' | 'folder' | 'name'>, me: string): string =>
  `${f.owner === me ? browseUrl(f.folder) : withMeUrl(f.owner, f.folder)}?at=${encodeURIComponent(f.name)}`;
