import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

// The web UI builds into dist/web, which the server serves at `/`; hashed
// assets go under dist/web/assets/ (cached for a year by the server).
export default defineConfig({
  root: webRoot,
  // Relative asset URLs: the server rewrites them to <base-path>/assets/ in the shell (src/routes/ui.ts).
  base: './',
  plugins: [react()],
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    // One small app: keep the CSS in one file so the first paint has every style.
    cssCodeSplit: false,
  },
});
