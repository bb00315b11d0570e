/** Whether an environment switch turns a native path off: FILE_CLOUD_NATIVE_CRYPTO=0, FILE_CLOUD_NATIVE_FS=0 (or false, off, no). */
export const nativeDisabled = (value: string | undefined): boolean => value !== undefined && /^(0|false|off|no)$/i.test(value.trim());
