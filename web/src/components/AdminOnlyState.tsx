import type { ApiError } from '../api/errors';
import { FailedState } from './FolderStates';

/** An admin page's list that did not load: refused to a non-admin (403, with the way home), or failed (with Try again). */
export function AdminOnlyState({ error, failed, forbiddenTitle, forbiddenText, onRetry }: { error: ApiError; failed: string; forbiddenTitle: string; forbiddenText: string; onRetry: () => void }) {
  const forbidden = error.status === 403;
  return <FailedState icon={forbidden ? 'lock' : 'alert'} title={forbidden ? forbiddenTitle : failed} text={forbidden ? forbiddenText : error.message} home={forbidden} onRetry={onRetry} />;
}
