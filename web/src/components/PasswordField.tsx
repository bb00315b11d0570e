import { forwardRef, useState } from 'react';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/** A labelled password input with a show/hide button, as on the sign-in page. */
export const PasswordField = forwardRef<HTMLInputElement, { label: string; name: string; value: string; onChange: (v: string) => void; autoComplete: string; invalid?: boolean; describedBy?: string; autoFocus?: boolean }>(
  function PasswordField(props, ref) {
    const [shown, setShown] = useState(false);
    return (
      <label className="field">
        <span>{props.label}</span>
        <span className="password-wrap">
          <input
            ref={ref}
            name={props.name}
            type={shown ? 'text' : 'password'}
            autoComplete={props.autoComplete}
            autoFocus={props.autoFocus}
            spellCheck={false}
            value={props.value}
            onChange={(e) => props.onChange(e.target.value)}
            aria-invalid={props.invalid ? true : undefined}
            aria-describedby={props.describedBy}
          />
          <button type="button" className="icon-button small reveal" aria-label={shown ? t('field.hide', { label: props.label }) : t('field.show', { label: props.label })} aria-pressed={shown} onClick={() => setShown((s) => !s)}>
            <Icon name="eye" size={18} />
          </button>
        </span>
      </label>
    );
  },
);
