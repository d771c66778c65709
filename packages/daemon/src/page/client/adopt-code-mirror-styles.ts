import { StyleModule } from 'style-mod';

/**
 * Gives CodeMirror's styles to the page through one constructable stylesheet. CodeMirror mounts its
 * styles with style-mod, which writes them into a `<style>` element when the root is a document
 * (it adopts a stylesheet only for shadow roots); the page's CSP (`style-src 'self'`) refuses that
 * element. A constructable stylesheet is CSSOM, which the CSP does not govern, so the page keeps
 * its strict policy. The modules keep style-mod's order (a later module takes precedence; a module
 * mounted again in another order moves), and each is written once. Call before the first editor.
 */
export function adoptCodeMirrorStyles(): void {
  const sheet = new CSSStyleSheet();
  const modules: StyleModule[] = [];
  StyleModule.mount = (root, given) => {
    let changed = false;
    let next = 0;
    for (const module of Array.isArray(given) ? given : [given as StyleModule]) {
      let index = modules.indexOf(module);
      if (index > -1 && index < next) {
        modules.splice(index, 1);
        next--;
        index = -1;
      }
      if (index === -1) {
        modules.splice(next++, 0, module);
        changed = true;
      } else next = index + 1;
    }
    if (changed) sheet.replaceSync(modules.map((module) => module.getRules()).join('\n'));
    const target = root as Document | ShadowRoot;
    if (!target.adoptedStyleSheets.includes(sheet)) target.adoptedStyleSheets = [sheet, ...target.adoptedStyleSheets];
  };
}
