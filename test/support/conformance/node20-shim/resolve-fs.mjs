// Module resolve hook (registered by register.mjs): `fs` / `node:fs` imported from inside the
// conformance package resolves to fs-with-glob-sync.mjs; every other import resolves as usual.
const replacement = new URL('./fs-with-glob-sync.mjs', import.meta.url).href;
const conformancePackage = '/node_modules/@modelcontextprotocol/conformance/';

export async function resolve(specifier, context, nextResolve) {
  const fromConformance = context.parentURL?.includes(conformancePackage) === true;
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: replacement, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
