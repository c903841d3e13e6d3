// Snapshot of what a visitor sees: the shown elements (aesenv/render/seen.js) with their boxes and
// computed styles, the shown text as runs in document order (each with the element it belongs
// to and its box, so the renderer can confirm it in the screenshot), and page-level counts. Runs
// in our isolated world through the natives `N`; returns plain JSON.
(N, opts) => {
  const SKIP = new N.Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "TEMPLATE", "BR", "WBR"]);
  const INTERACTIVE = new N.Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL", "OPTION"]);
  const maxNodes = opts.maxNodes;
  const doc = N.document, body = N.body(doc), root = N.root(doc), view = N.viewport();
  const seen = N.seen({ maxHeight: opts.maxHeight });
  const num = N.parseFloat, int = (text) => N.parseInt(text, 10);
  const transparent = (c) => !c || c === "transparent" || /rgba\([^)]*,\s*0\)$/.test(c);
  const classesOf = (el) => N.String(N.className(el) || "").split(/\s+/).filter(Boolean).slice(0, 4);
  const elements = [];
  const index = new N.Map();
  const all = body ? N.all(body, "*") : [];
  let truncated = false;
  for (const el of body ? [body, ...all] : []) {
    const tag = N.tag(el);
    if (SKIP.has(tag)) continue;
    if (elements.length >= maxNodes) { truncated = true; break; }
    const shown = seen.element(el);
    if (!shown.shown) continue;
    const css = seen.css(el);
    let parent = N.parent(el), pidx = -1;
    while (parent) { if (index.has(parent)) { pidx = index.get(parent); break; } parent = N.parent(parent); }
    index.set(el, elements.length);
    const fontSize = num(css("font-size")), lineHeight = css("line-height"), zIndex = css("z-index");
    const background = seen.toRgb(css("background-color"));
    const behind = seen.firstBackground(el);
    const b = shown.box;
    elements.push({
      tag: tag.toLowerCase(),
      id: N.id(el) || "",
      classes: classesOf(el),
      parent: pidx,
      x: b.x0, y: b.y0, w: b.x1 - b.x0, h: b.y1 - b.y0,
      opacity: +shown.opacity.toFixed(3),
      paints: seen.paints(el),
      color: seen.toRgb(css("color")),
      background: behind,
      own_background: transparent(background) ? "" : background,
      background_image: css("background-image") !== "none",
      border: num(css("border-top-width")) > 0 || num(css("border-left-width")) > 0,
      shadow: css("box-shadow") !== "none",
      radius: num(css("border-top-left-radius")) || 0,
      font_size: fontSize,
      font_weight: int(css("font-weight")) || 400,
      font_family: css("font-family").split(",")[0].replace(/["']/g, "").trim(),
      line_height: lineHeight === "normal" ? fontSize * 1.2 : num(lineHeight),
      text_align: css("text-align"),
      position: css("position"),
      z_index: zIndex === "auto" ? 0 : (int(zIndex) || 0),
      padding: [css("padding-top"), css("padding-right"), css("padding-bottom"), css("padding-left")].map((v) => num(v)),
      interactive: INTERACTIVE.has(tag) || N.hasAttr(el, "onclick") || css("cursor") === "pointer" || N.tabIndex(el) >= 0,
      transform_3d: /matrix3d/.test(css("transform")) || css("transform-style") === "preserve-3d" || css("perspective") !== "none",
    });
  }
  // The shown text, run by run: [element index (its nearest listed ancestor), text, x, y, w, h, gap,
  // case] (`case`: the text-transform the screen shows it in).
  const runs = [];
  let chars = 0;
  if (body) {
    seen.runs(body, (raw, parent, box, gap, how) => {
      if (chars >= 40000) return;
      let owner = parent, at = -1;
      while (owner) { if (index.has(owner)) { at = index.get(owner); break; } owner = N.parent(owner); }
      const t = raw.replace(/\s+/g, " ");
      chars += t.length;
      runs.push([at, t.slice(0, 2000), box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0, gap ? 1 : 0,
                 how === "uppercase" || how === "lowercase" || how === "capitalize" ? how : ""]);
    }, 5000);
  }
  const counts = {};
  const everything = N.all(doc, "*");
  for (const el of everything) {
    const t = N.tag(el).toLowerCase();
    counts[t] = (counts[t] || 0) + 1;
  }
  const shownImages = N.all(doc, "img").filter((i) => seen.element(i).shown);
  // The context each canvas was given is the page's claim (noted in its world): it holds only
  // where the canvas really has a context of that kind (asking for the same kind returns it).
  const claims = N.Array.isArray(opts.contexts) ? opts.contexts : [];
  const shownCanvases = N.all(doc, "canvas").map((c, i) => [c, i]).filter(([c]) => seen.element(c).shown);
  return {
    elements,
    truncated,
    runs,
    metrics: {
      title: N.String(N.title(doc) || ""),
      lang: (root && N.attr(root, "lang")) || "",
      doc_width: N.math.max(root ? N.scrollWidth(root) : 0, body ? N.scrollWidth(body) : 0),
      doc_height: seen.docHeight,
      viewport_width: view.width,
      viewport_height: view.height,
      node_count: everything.length,
      tag_counts: counts,
      images_total: shownImages.length,
      images_broken: shownImages.filter((i) => N.prop(i, "complete") && N.prop(i, "naturalWidth") === 0).length,
      canvases: shownCanvases.map(([c, i]) => {
        const r = N.box(c), kind = typeof claims[i] === "string" ? claims[i] : "";
        return { x: r.left + view.scrollX, y: r.top + view.scrollY, w: r.width, h: r.height,
                 context: kind && N.getContext(c, kind) ? kind : "" };
      }),
      headings: [],
    },
  };
}
