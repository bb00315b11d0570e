import type { RefObject } from 'react';

type Props = {
  fileInput: RefObject<HTMLInputElement | null>;
  folderInput: RefObject<HTMLInputElement | null>;
  onPick: (files: FileList | null, input: HTMLInputElement) => void;
};

/**
 * The hidden file and folder pickers behind the upload buttons (a button
 * clicks one through its ref: a styled <input type=file> is not possible).
 */
export function UploadPickers({ fileInput, folderInput, onPick }: Props) {
  return (
    <>
      <input ref={fileInput} type="file" multiple hidden data-testid="file-input" onChange={(e) => onPick(e.currentTarget.files, e.currentTarget)} />
      {/* webkitdirectory is not in React's types; `directory` is the older spelling. */}
      <input ref={folderInput} type="file" multiple hidden data-testid="folder-input" {...{ webkitdirectory: '', directory: '' }} onChange={(e) => onPick(e.currentTarget.files, e.currentTarget)} />
    </>
  );
}
