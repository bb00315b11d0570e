// Stylesheets are imported for their side effect (Vite bundles them). TypeScript 6 checks that a
// side-effect import resolves (noUncheckedSideEffectImports), and CSS has no types of its own.
declare module '*.css';
