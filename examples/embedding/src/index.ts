export { createOutlinePlugin } from './create-outline-plugin.js';
export { outlineServerPlugins, runOutlineServer } from './create-outline-server.js';
export { OutlineExtension, outlineExtension } from './outline-extension.js';
export type { OutlineHeading } from './outline-tools.js';
export { OutlineTools } from './outline-tools.js';
