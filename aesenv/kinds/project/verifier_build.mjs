// The verifier's build: Vite from our read-only install, our settings, nothing of the project's.
// Run as `node --input-type=module -e <this> <node_modules dir> <settings JSON>` in the project's
// workspace. Vite is imported by its absolute path (never the bare name: a project's package.json
// could claim the name "vite" and resolve it to its own file), the config file, env files and
// PostCSS config searches are off, and no plugin is loaded, so no file of the project runs here;
// its sources are only read and bundled for the browser.
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const OURS = 86 // the exit code of a failure on our side (the project's code never runs before it)
const [modules, settings] = process.argv.slice(1)
let vite
try {
  vite = await import(pathToFileURL(path.join(modules, 'vite', 'dist', 'node', 'index.js')).href)
} catch (err) {
  console.error(`aesenv: Vite could not be loaded from ${modules}: ${err && err.message}`)
  process.exit(OURS)
}
const root = process.cwd()
const options = JSON.parse(settings)
try {
  await vite.build({
    ...options,
    root,
    configFile: false, // no vite.config.* of the project's
    envFile: false, // no .env* of the project's
    plugins: [],
    css: { ...options.css, postcss: {} }, // an inline PostCSS config: none is searched for
    build: { ...options.build, outDir: path.join(root, options.build.outDir),
             rollupOptions: { input: path.join(root, 'index.html') } },
  })
} catch (err) {
  console.error(`error during build:\n${(err && (err.stack || err.message)) || err}`)
  process.exit(1)
}
