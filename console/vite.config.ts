/**
 * The admin console's build: a single-page app served under `/admin/` (locally by `infra/local/runtime/console-assets.ts`),
 * built to `console/dist`. No inline script, so the page's Content-Security-Policy can say `script-src 'self'`.
 */
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The module preload polyfill is an inline script: the CSP would refuse it.
    modulePreload: { polyfill: false },
  },
});
