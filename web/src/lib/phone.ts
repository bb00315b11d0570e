import { useEffect, useState } from 'react';

/** The phone layout's breakpoint, as in styles.css. */
const PHONE = '(max-width: 640px)';

/** Whether the phone layout applies; follows a rotation or a resized window. */
export function usePhone(): boolean {
  const [phone, setPhone] = useState(() => matchMedia(PHONE).matches);
  useEffect(() => {
    const mq = matchMedia(PHONE);
    const on = () => setPhone(mq.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return phone;
}
