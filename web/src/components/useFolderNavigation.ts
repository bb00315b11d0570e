import { useCallback, useEffect, useRef, useState } from 'react';
import type { Segments } from '../api/paths';
import type { Place } from '../lib/place';
import type { Entry } from '../api/storage';
import { navigate } from '../lib/router';
import type { ListingState } from './useListing';

/** Whether keyboard focus is in the file list (then it should stay there after moving to another folder). */
const listHasFocus = () => !!document.activeElement?.closest('.file-grid');

/**
 * Moving into and out of folders, and where keyboard focus lands afterwards:
 * focus goes back into the list once the next listing has loaded (by bumping
 * `focusRequest`, which FileList watches), and going up puts the cursor on
 * the folder we came from.
 */
export function useFolderNavigation(segments: Segments, listing: ListingState, place: Place) {
  const cameFrom = useRef<string | null>(null);
  /** Move keyboard focus into the list once the next listing has loaded. */
  const focusOnLoad = useRef(false);
  const [focusRequest, setFocusRequest] = useState(0);

  useEffect(() => {
    if (listing.status !== 'ready' || !focusOnLoad.current) return;
    focusOnLoad.current = false;
    setFocusRequest((n) => n + 1);
  }, [listing]);

  const enter = useCallback(
    (folder: Entry) => {
      focusOnLoad.current = listHasFocus();
      navigate(place.url([...segments, folder.name]));
    },
    [segments, place],
  );

  const goUp = useCallback(() => {
    // Never above the place's root (a shared folder's parent is not shared).
    if (segments.length <= place.root.length) return;
    cameFrom.current = segments[segments.length - 1] ?? null;
    focusOnLoad.current = true;
    navigate(place.url(segments.slice(0, -1)));
  }, [segments, place]);

  /** The child folder we came up from, if any — once: arriving in a folder consumes it. */
  const takeCameFrom = useCallback(() => {
    const name = cameFrom.current;
    cameFrom.current = null;
    return name;
  }, []);

  /** After a change in this folder (new folder, rename, move, delete): focus the list when it has reloaded. */
  const focusListOnLoad = useCallback(() => {
    focusOnLoad.current = true;
  }, []);

  return { focusRequest, enter, goUp, takeCameFrom, focusListOnLoad };
}
