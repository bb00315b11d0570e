import { useRef, useState, type DragEvent } from 'react';
import { dragHasFiles } from '../lib/drop';
import { Icon } from './icons';
import { t } from '../lib/i18n';

/**
 * Drag and drop of files onto the page: whether files are being dragged over
 * it, and the handlers to spread on the drop zone. Drags of anything but
 * files (text, links) are left alone.
 */
export function useFileDrop(onDrop: (data: DataTransfer) => void) {
  const [dragging, setDragging] = useState(false);
  // dragenter/dragleave fire for every child crossed: count them, or the overlay flickers.
  const depth = useRef(0);
  const handlers = {
    onDragEnter(e: DragEvent) {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      depth.current++;
      setDragging(true);
    },
    onDragOver(e: DragEvent) {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    },
    onDragLeave() {
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setDragging(false);
    },
    onDrop(e: DragEvent) {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      depth.current = 0;
      setDragging(false);
      onDrop(e.dataTransfer);
    },
  };
  return { dragging, handlers };
}

/** Shown over the folder while files are dragged over the page. */
export function DropOverlay({ folderName }: { folderName: string }) {
  return (
    <div className="drop-overlay" aria-hidden="true">
      <div>
        <Icon name="upload" size={40} />
        <p>{t('drop.hint', { folder: folderName })}</p>
      </div>
    </div>
  );
}
