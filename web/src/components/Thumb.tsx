import { useEffect, useRef, useState } from 'react';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import { hasThumbnail, type ThumbSize } from '../api/thumbnails';
import { kindOf } from '../lib/file-kind';
import { KindIcon } from './icons';

/**
 * An entry's picture: its thumbnail for images the server draws, loaded only
 * once it scrolls near the view (IntersectionObserver), else its kind icon.
 */
export function Thumb({ storage, folder, entry, size, iconSize }: { storage: StorageApi; folder: Segments; entry: Entry; size: ThumbSize; iconSize?: number }) {
  const drawn = entry.is_file && hasThumbnail(entry.name);
  const path = [...folder, entry.name];
  const [src, setSrc] = useState<string | undefined>(() => (drawn ? storage.thumbnails.peek(path, size, entry.modified) : undefined));
  const ref = useRef<HTMLSpanElement>(null);
  const pathKey = path.join('\0');

  useEffect(() => {
    if (!drawn) return;
    const known = storage.thumbnails.peek(pathKey.split('\0'), size, entry.modified);
    setSrc(known);
    if (known) return;
    const el = ref.current;
    if (!el) return;
    let live = true;
    const io = new IntersectionObserver(
      (seen) => {
        if (!seen.some((s) => s.isIntersecting)) return;
        io.disconnect();
        void storage.thumbnails.load(pathKey.split('\0'), size, entry.modified).then((url) => live && setSrc(url ?? undefined));
      },
      { rootMargin: '200px' },
    );
    io.observe(el);
    return () => {
      live = false;
      io.disconnect();
    };
  }, [drawn, storage, pathKey, size, entry.modified]);

  return (
    <span ref={ref} className={`thumb thumb-${size}`} data-thumb={src ? 'loaded' : drawn ? 'pending' : 'none'}>
      {src ? <img src={src} alt="" loading="lazy" decoding="async" draggable={false} /> : <KindIcon kind={kindOf(entry.name, entry.is_file)} size={iconSize} />}
    </span>
  );
}
