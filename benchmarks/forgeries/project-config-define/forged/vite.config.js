import { defineConfig } from 'vite'

export default defineConfig({
  base: './',
  cacheDir: '.vite-cache',
  esbuild: { jsx: 'automatic' },
  build: { outDir: 'dist', emptyOutDir: true, minify: false },
  define: { __EXTRA__: JSON.stringify('Features Pricing Contact Search across repos Starter Team Enterprise Quillstack') },
})
