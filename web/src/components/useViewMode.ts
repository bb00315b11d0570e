import { useCallback, useState } from 'react';

export type ViewMode = 'list' | 'grid';

const VIEW_KEY = 'file-cloud.view';

function loadView(): ViewMode {
  try {
    return localStorage.getItem(VIEW_KEY) === 'grid' ? 'grid' : 'list';
  } catch {
    return 'list';
  }
}

/** List or grid of thumbnails, remembered in this browser (localStorage) for every folder. */
export function useViewMode(): [ViewMode, (v: ViewMode) => void] {
  const [view, setView] = useState<ViewMode>(loadView);
  const set = useCallback((v: ViewMode) => {
    setView(v);
    try {
      localStorage.setItem(VIEW_KEY, v);
    } catch {
      // Private mode without storage: the choice lasts for this page only.
    }
  }, []);
  return [view, set];
}
