import type { ReactNode } from 'react';
import { Icon, type IconName } from './icons';

/** The head of a Settings section: its icon, its heading (which labels the section) and a line on what it is for. */
export function SectionHead({ id, icon, title, help, children }: { id: string; icon: IconName; title: string; help: string; children?: ReactNode }) {
  return (
    <header className="section-head">
      <Icon name={icon} />
      <div>
        <h2 id={id}>{title}</h2>
        <p className="muted small">{help}</p>
      </div>
      {children}
    </header>
  );
}
