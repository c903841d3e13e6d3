"""Procedural guidance for `project` tasks, fetched by the agent with the `skill(name)` tool.

The prompt says what to build; these texts say how to work in this particular sandbox (a React +
Vite project with a read-only node_modules, no network, and a `webshot` tool that builds and
screenshots the app). Keeping them out of the system prompt keeps that prompt short: an agent
pulls a skill only when it reaches the step it covers.
"""

SKILLS: dict[str, str] = {
    "page-decomposition": """\
Before writing code, turn the request into a plan of sections and components.

1. Read the prompt (or the reference screenshot) top to bottom and list every visible block: top bar,
   hero, each content section, forms, footer. Write down the exact phrases the user asked for;
   they must appear as visible text, spelled the same way.
2. Give each section a short lowercase id (features, pricing, contact). Every in-page link
   `href="#pricing"` needs an element with `id="pricing"`, so fix the ids now and reuse them for
   the navigation.
3. Map blocks to files: one component per section in src/components/ (Header.jsx, Pricing.jsx, ...),
   composed in src/App.jsx. Repeated items (cards, plans, table rows, menu dishes) become a data
   array mapped to JSX, not copy-pasted markup.
4. Choose semantic elements where the request implies them: <nav> with <a> links, <section> per
   block, <table>/<tr> for tabular data, <ul>/<li> for lists, <form> with <input> and <button>,
   <footer> at the end. Counts matter: "at least six projects" means six rendered items.
5. For a reference page, also note the palette, the widths of columns and the heading sizes at a
   1280x960 viewport before you start.
""",
    "asset-preparation": """\
The sandbox has no network and node_modules is read-only: it holds react, react-dom and vite and
nothing else, so `npm install` and CDN links cannot help. Every asset has to be written into the
project.

- Images and icons: draw them as inline <svg> in JSX (shapes, paths, text). An avatar can be a
  circle with initials, a thumbnail a few coloured rectangles, a map a path over a rectangle. Use
  `viewBox` so the drawing scales, and camelCase attributes in JSX (strokeWidth, fillOpacity).
- Backgrounds and decoration: CSS gradients, borders, box-shadows and pseudo-elements cover most
  hero art without any file.
- Fonts: rely on system stacks (system-ui, Georgia, Helvetica). Google Fonts and other remote
  URLs are blocked and only produce failed requests.
- Data: put lists, prices, schedules and chart values in JS arrays inside the component or in a
  small module such as src/data.js; there is no API to fetch from.
- If you really need a bitmap, place it under public/ or import it from src/ so Vite bundles it;
  never point src at http(s) addresses.

After adding assets, check the webshot report's failed-requests list: it should be empty.
""",
    "code-generation": """\
Write the app in small, complete files with write_file; use edit_file for targeted changes later.

- Entry chain: index.html holds <div id="root"> and loads /src/main.jsx, which calls
  createRoot(document.getElementById('root')) and renders <App />. Leave that chain intact unless
  the task is about it.
- JSX rules: className instead of class, htmlFor instead of for, self-close void tags (<input />,
  <br />), style takes an object (style={{ height: '40%' }}), and every mapped element needs a
  stable key.
- Imports are case-sensitive relative paths with the extension: import Pricing from
  './components/Pricing.jsx'. Each component file has one default export.
- Styles: one stylesheet imported once (src/index.css from main.jsx, or an App.css imported by
  App.jsx). Use CSS grid or flexbox for card rows and keep a readable max-width for text.
- Only React 18 is available: no router, no UI kit, no chart library. Navigation between
  sections is plain anchors; interactivity uses useState; charts are SVG or CSS bars.
- Put every phrase the prompt quotes into rendered text, not only into alt attributes or
  comments; hidden or collapsed content may not count.
""",
    "validation": """\
Check the result the way the grader sees it: a production build served and opened in a browser.
The grader builds with the scaffold's Vite settings and `index.html` as the entry; it does not use
vite.config.js, PostCSS or Tailwind configs, .env files or package.json build scripts, and webshot
builds the same way, so webshot shows what is graded.

1. Run `npm run build` with the run tool. It must finish without errors; read the first error
   line if not (a missing file, a JSX syntax error, an unknown export).
2. Call webshot on "/" once the build passes. Look at the screenshot for layout problems, then at
   the rest of the report: page errors and console errors must be empty, failed requests must be
   empty, and the DOM statistics should show the elements you meant to render (links, sections,
   table rows, inputs, svg).
3. Walk through the prompt requirement by requirement: is each quoted phrase visible, does each
   count ("at least eight rows") hold, does every href="#x" have a matching id="x"? search_files
   for href="# and for id=" makes the last check quick.
4. A blank screenshot with a clean build usually means a runtime error: read the page errors.
5. Fix, rebuild, and webshot again. Submit only after a clean build and a screenshot that shows
   the whole request; do not submit on the assumption that it works.
""",
    "repair": """\
When an existing project is broken, find the cause before changing anything.

1. Reproduce: run `npm run build`, then webshot "/". Classify the failure: the build fails, the
   build passes but the page is blank, or the page renders but something does not work.
2. Build failures: the log names the file and the problem. "Could not resolve './x'" means an
   import path does not match a real file; list_files the folder and correct the path (spelling,
   case, extension). Syntax errors come with a line number; view_file around it.
3. Blank page with a clean build: read the page errors in the webshot report. A message about the
   target container (in a production build, React error #299) means main.jsx looks for an element
   that index.html does not have; make the id in getElementById and the element in index.html agree.
4. Links that do nothing: compare each href="#name" with the ids that exist (search_files for both);
   rename the id or the href so they match rather than adding scroll code.
5. Make the smallest change that fixes the cause, keep the existing content, then do what else the
   prompt asks. Rebuild and webshot to confirm the symptom is gone before you submit.
""",
}


def skill_text(name: str) -> str:
    """The guidance stored under `name`; raises KeyError naming the known skills."""
    try:
        return SKILLS[name]
    except KeyError:
        known = ", ".join(sorted(SKILLS))
        raise KeyError(f"unknown skill {name!r}; known skills: {known}") from None
