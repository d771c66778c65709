export { AppViewExtension, appViewResourceUri, uiExtension } from './app-view-extension.js';
export { createAppViewPlugin } from './create-app-view-plugin.js';
export type { ViewCell, ViewContent, ViewOutput } from './view-content.js';
