/**
 * Builds the web UI (src/ui) into dist/ui, run by `npm run build:ui` (part of `prepare`, so at
 * `npm ci`). The server serves dist/ui at `/` and `/ui/...` (src/server/ui-assets.ts); assets are
 * content-hashed under /ui/assets/ so they can be cached for good. Preact's JSX goes through
 * Vite's own transformer (no Babel plugin needed).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/ui/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // One small app: a single script and stylesheet load fastest over one connection.
    cssCodeSplit: false,
    modulePreload: false,
  },
});
