import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Relative URLs (base './'): the same files work under /ui/ on the server and at / on the gateway.
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, reportCompressedSize: false, chunkSizeWarningLimit: 1000 },
});
