import type { ReactNode } from 'react';
import { Icon, type IconName } from './icons';
import { SectionHead } from './SectionHead';
import { ListEmpty, ListError, ListSkeleton } from './SectionStates';
import type { RemoteList } from './useRemoteList';

/**
 * A Settings section listing what the account holds (app passwords, SSH keys): a heading saying
 * what it is for, the list's loading, error and empty states, the list, its count, and the one
 * button that adds (beside the heading once there is a list, in the empty state before).
 */
export function SettingsListSection<T>(props: {
  id: string;
  icon: IconName;
  title: string;
  about: string;
  /** The list counted ("2 app passwords"), in the reader's language. */
  count: (n: number) => string;
  /** The loading state's label ("Loading app passwords"). */
  loading: string;
  /** The sentence shown when the list cannot be read ("Your app passwords could not be loaded"). */
  failed: string;
  empty: { title: string; text: string };
  addLabel: string;
  onAdd: () => void;
  list: RemoteList<T>;
  onRetry: () => void;
  children: (items: T[]) => ReactNode;
  /** The section's dialogs (add, remove). */
  dialogs?: ReactNode;
}) {
  const { list } = props;
  const titleId = `${props.id}-title`;
  const add = (
    <button type="button" className="button primary small" onClick={props.onAdd}>
      <Icon name="plus" size={16} /> {props.addLabel}
    </button>
  );
  return (
    <section className="settings-section" aria-labelledby={titleId}>
      <SectionHead id={titleId} icon={props.icon} title={props.title} help={props.about}>
        {list.status === 'ready' && list.items.length > 0 ? add : null}
      </SectionHead>
      {list.status === 'loading' ? (
        <ListSkeleton label={props.loading} />
      ) : list.status === 'error' ? (
        <ListError title={props.failed} error={list.error} onRetry={props.onRetry} />
      ) : list.items.length === 0 ? (
        <ListEmpty icon={props.icon} title={props.empty.title} text={props.empty.text}>
          {add}
        </ListEmpty>
      ) : (
        <>
          <ul className="item-list" aria-label={props.title}>
            {props.children(list.items)}
          </ul>
          <div className="status-line muted">{props.count(list.items.length)}</div>
        </>
      )}
      {props.dialogs}
    </section>
  );
}

/** One fact of an item: its label, what it is, and a fuller form on hover (an exact date). */
export type ItemFact = { readonly label: string; readonly value: ReactNode; readonly title?: string; readonly className?: string };

/** One item of a SettingsListSection: its name and badges, its facts, and the one action on it (revoke, remove). */
export function SettingsItem(props: { id: string; name: string; inactive?: boolean; badges: ReactNode; facts: readonly ItemFact[]; action: { label: string; onClick: () => void } }) {
  return (
    <li className={`list-item${props.inactive ? ' inactive' : ''}`} data-id={props.id} aria-label={props.name}>
      <div className="item-main">
        <div className="item-title">
          <span className="item-name">{props.name}</span>
          {props.badges}
        </div>
        <dl className="item-facts">
          {props.facts.map((f) => (
            <div key={f.label}>
              <dt>{f.label}</dt>
              <dd className={f.className} title={f.title}>
                {f.value}
              </dd>
            </div>
          ))}
        </dl>
      </div>
      <div className="item-actions">
        <button type="button" className="button small danger-text" onClick={props.action.onClick}>
          <Icon name="trash" size={16} /> {props.action.label}
        </button>
      </div>
    </li>
  );
}
