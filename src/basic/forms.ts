import type { Translate } from '../lib/i18n/translate.js';
import type { FolderActionDone } from '../services/folder-actions.js';

/** What the basic pages' forms send, and what a folder page says after a change: pure. */

/** The fields of an urlencoded form; the first value of a repeated name wins. */
export function formFields(body: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of new URLSearchParams(body)) if (!(k in out)) out[k] = v;
  return out;
}

/** The sentence a folder page shows after a change. */
export function doneSentence(t: Translate, d: FolderActionDone): string {
  switch (d.done) {
    case 'uploaded':
      return t('basic.uploaded', { count: d.names.length, names: d.names.join(', ') });
    case 'created':
      return t('basic.created', { name: d.name });
    case 'unchanged':
      return t('basic.unchanged');
    case 'renamed':
      return t('basic.renamed', { from: d.from, to: d.to });
    case 'deleted':
      return t('basic.deleted', { name: d.name });
  }
}
