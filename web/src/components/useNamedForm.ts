import { useRef, useState, type FormEvent } from 'react';
import { messageOf } from '../api/errors';

/**
 * A form that makes something named (an app password, an SSH key): the name is asked for before
 * anything is sent, the form is sent once at a time, and the server's refusal is shown in place so
 * the form can be sent again.
 */
export function useNamedForm(missingName: string) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const nameRef = useRef<HTMLInputElement>(null);

  /** The submit handler that runs `send` with the trimmed name. */
  const submit = (send: (name: string) => Promise<void>) => async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!name.trim()) {
      setError(missingName);
      return nameRef.current?.focus();
    }
    setBusy(true);
    setError(null);
    try {
      await send(name.trim());
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };

  return { name, setName, error, busy, nameRef, submit };
}
