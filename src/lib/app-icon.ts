/**
 * The app's icon (a white cloud on blue), served by the pages that are not
 * the web app (/basic/ and the share pages) so a browser asking for an icon
 * gets one instead of a 404 in its console. The web app inlines the same
 * drawing as a data: URL in web/index.html.
 */
export const APP_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#3b6ef5"/><path d="M9 21.5a4.5 4.5 0 0 1 .9-8.9 6 6 0 0 1 11.6 1.4A3.8 3.8 0 0 1 21.2 21.5z" fill="white"/></svg>`;
