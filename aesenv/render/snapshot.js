// Snapshot of what a visitor sees: visible elements with boxes, own text and computed
// styles, plus page-level counts. Runs inside the page through the natives `N` (see
// natives.js: nothing is read off a page object directly); returns plain JSON.
(N, maxNodes) => {
  const SKIP = new N.Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "TEMPLATE", "BR", "WBR"]);
  const INTERACTIVE = new N.Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL", "OPTION"]);
  const doc = N.document, body = N.body(doc), root = N.root(doc), view = N.viewport();
  const num = N.parseFloat, int = (text) => N.parseInt(text, 10);
  // Computed colors may be oklch()/lab()/color() (Tailwind v4 emits oklch); consumers get sRGB.
  const probe = N.createElement(doc, "canvas");
  N.setWidth(probe, 1);
  N.setHeight(probe, 1);
  const pctx = N.getContext(probe, "2d", { willReadFrequently: true });
  const rgbCache = new N.Map();
  const toRgb = (c) => {
    if (!c || c.startsWith("rgb") || !pctx) return c;
    if (rgbCache.has(c)) return rgbCache.get(c);
    N.ctx2d.clearRect(pctx, 0, 0, 1, 1);
    N.ctx2d.setFill(pctx, "#000");
    N.ctx2d.setFill(pctx, c);
    N.ctx2d.fillRect(pctx, 0, 0, 1, 1);
    const d = N.ctx2d.pixel(pctx);
    const out = d[3] === 255 ? `rgb(${d[0]}, ${d[1]}, ${d[2]})`
      : `rgba(${d[0]}, ${d[1]}, ${d[2]}, ${d[3] === 0 ? 0 : +(d[3] / 255).toFixed(3)})`;
    rgbCache.set(c, out);
    return out;
  };
  const transparent = (c) => !c || c === "transparent" || /rgba\([^)]*,\s*0\)$/.test(c);
  const bgCache = new N.Map();
  const effectiveBg = (el) => {
    const chain = [];
    let node = el, found = null;
    while (node && N.nodeType(node) === 1) {
      if (bgCache.has(node)) { found = bgCache.get(node); break; }
      chain.push(node);
      const css = N.style(node);
      if (css("background-image") && css("background-image") !== "none") { found = "image"; break; }
      const own = toRgb(css("background-color"));
      if (!transparent(own)) { found = own; break; }
      node = N.parent(node);
    }
    if (found === null) found = "rgb(255, 255, 255)";
    for (const n of chain) bgCache.set(n, found);
    return found;
  };
  const ownText = (el) => {
    let t = "";
    for (const c of N.childNodes(el)) if (N.nodeType(c) === 3) t += N.text(c);
    return t.replace(/\s+/g, " ").trim();
  };
  const classesOf = (el) => N.String(N.className(el) || "").split(/\s+/).filter(Boolean).slice(0, 4);
  const elements = [];
  const index = new N.Map();
  const all = body ? N.all(body, "*") : [];
  let truncated = false;
  for (const el of body ? [body, ...all] : []) {
    const tag = N.tag(el);
    if (SKIP.has(tag)) continue;
    if (elements.length >= maxNodes) { truncated = true; break; }
    const r = N.box(el);
    if (r.width < 1 || r.height < 1) continue;
    const css = N.style(el);
    if (css("display") === "none" || css("visibility") === "hidden" || num(css("opacity")) < 0.05) continue;
    const text = ownText(el);
    let parent = N.parent(el), pidx = -1;
    while (parent) { if (index.has(parent)) { pidx = index.get(parent); break; } parent = N.parent(parent); }
    index.set(el, elements.length);
    const fontSize = num(css("font-size")), lineHeight = css("line-height"), zIndex = css("z-index");
    const background = toRgb(css("background-color"));
    elements.push({
      tag: tag.toLowerCase(),
      id: N.id(el) || "",
      classes: classesOf(el),
      parent: pidx,
      x: r.left + view.scrollX, y: r.top + view.scrollY, w: r.width, h: r.height,
      text: text.slice(0, 300),
      text_len: text.length,
      color: toRgb(css("color")),
      background: effectiveBg(el),
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
  const counts = {};
  const everything = N.all(doc, "*");
  for (const el of everything) {
    const t = N.tag(el).toLowerCase();
    counts[t] = (counts[t] || 0) + 1;
  }
  const imgs = N.all(doc, "img");
  const visibleText = body ? (N.innerText(body) || "").replace(/\s+/g, " ").trim() : "";
  return {
    elements,
    truncated,
    frames: N.state.frames,  // animation frames the page has run (counted by the renderer's timers)
    metrics: {
      title: N.String(N.title(doc) || ""),
      lang: (root && N.attr(root, "lang")) || "",
      doc_width: N.math.max(root ? N.scrollWidth(root) : 0, body ? N.scrollWidth(body) : 0),
      doc_height: N.math.max(root ? N.scrollHeight(root) : 0, body ? N.scrollHeight(body) : 0),
      viewport_width: view.width,
      viewport_height: view.height,
      node_count: everything.length,
      popups_blocked: N.state.popups,
      tag_counts: counts,
      text_chars: visibleText.length,
      visible_text: visibleText.slice(0, 20000),
      images_total: imgs.length,
      images_broken: imgs.filter((i) => N.prop(i, "complete") && N.prop(i, "naturalWidth") === 0).length,
      canvases: N.all(doc, "canvas").map((c) => {
        const r = N.box(c), context = N.contextOf(c);
        return { w: r.width, h: r.height, context: context ? context.kind : "" };
      }),
      headings: N.all(doc, "h1,h2,h3,h4,h5,h6").slice(0, 50).map((h) => ({
        level: int(N.tag(h)[1]), text: (N.innerText(h) || "").trim().slice(0, 120),
      })),
    },
  };
}
