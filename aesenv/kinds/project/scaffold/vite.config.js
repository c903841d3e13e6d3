import { defineConfig } from 'vite'

// Relative asset URLs (the built page is opened from any path), the cache beside the sources
// (node_modules is read-only), and JSX compiled by esbuild.
export default defineConfig({
  base: './',
  cacheDir: '.vite-cache',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic' },
  build: { outDir: 'dist', emptyOutDir: true, minify: false, reportCompressedSize: false },
})
