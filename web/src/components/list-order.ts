/**
 * The vocabulary shared by the file list, its rows and the hooks that drive
 * them: how the list is sorted and how a click or key changes the selection.
 * It lives apart from FileList so that FileRow (which FileList renders) can
 * use it without importing FileList back — an import cycle.
 */

export type SortKey = 'name' | 'size' | 'modified';
export type Sort = { key: SortKey; dir: 'asc' | 'desc' };

/** A plain click selects only this row; Ctrl/Cmd toggles it; Shift selects the range from the anchor. */
export type SelectMode = 'only' | 'toggle' | 'range';
