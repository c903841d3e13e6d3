// Snapshot of what a visitor may see: the elements that pass the first filter
// (aesenv/render/seen.js) with their boxes and computed styles, the text that passes it as runs in
// flat-tree order (each with the element it belongs to and its line boxes), the items the
// counterfactual measure then takes away (aesenv/render/counterfactual.js: each element's own text,
// each picture), and page-level counts. Runs in our isolated world through the natives `N`;
// returns plain JSON.
(N, opts) => {
  const SKIP = new N.Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "TEMPLATE", "BR", "WBR"]);
  const INTERACTIVE = new N.Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL", "OPTION"]);
  const maxNodes = opts.maxNodes;
  const doc = N.document, body = N.body(doc), root = N.root(doc), view = N.viewport();
  const seen = N.seen({ maxHeight: opts.maxHeight, pixels: true }), cf = N.cf;
  cf.reset();
  const num = N.parseFloat, int = (text) => N.parseInt(text, 10);
  const transparent = (c) => !c || c === "transparent" || /rgba\([^)]*,\s*0\)$/.test(c);
  const classesOf = (el) => N.String(N.className(el) || "").split(/\s+/).filter(Boolean).slice(0, 4);
  const elements = [];
  const index = new N.Map();
  let truncated = false;
  for (const el of body ? seen.flatElements(body, maxNodes + 1) : []) {
    const tag = N.tag(el);
    if (SKIP.has(tag)) continue;
    if (elements.length >= maxNodes) { truncated = true; break; }
    const shown = seen.element(el);
    if (!shown.shown) continue;
    const css = seen.css(el);
    let parent = seen.flatParent(el), pidx = -1;
    while (parent) { if (index.has(parent)) { pidx = index.get(parent); break; } parent = seen.flatParent(parent); }
    index.set(el, elements.length);
    const fontSize = num(css("font-size")), lineHeight = css("line-height"), zIndex = css("z-index");
    const background = seen.toRgb(css("background-color"));
    const behind = seen.firstBackground(el);
    const b = shown.box, own = seen.paints(el), paints = own === "generated" ? "replaced" : own;
    const interactive = INTERACTIVE.has(tag) || N.hasAttr(el, "onclick") || css("cursor") === "pointer" || N.tabIndex(el) >= 0;
    elements.push({
      tag: tag.toLowerCase(),
      id: N.id(el) || "",
      classes: classesOf(el),
      parent: pidx,
      x: b.x0, y: b.y0, w: b.x1 - b.x0, h: b.y1 - b.y0,
      opacity: +shown.opacity.toFixed(3),
      paints,
      // what the counterfactual takes away to see its own paint: a picture, generated content, or
      // the paint of its box (a card's background, a table's borders, a cover)
      item: paints === "replaced" ? cf.elementItem(el, own === "generated" ? "pseudo" : "whole")
        : paints === "style" ? cf.elementItem(el, "box") : -1,
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
      interactive,
      transform_3d: /matrix3d/.test(css("transform")) || css("transform-style") === "preserve-3d" || css("perspective") !== "none",
    });
  }
  // The text that passes, run by run (a run: the stretch of a text node's characters that passes;
  // most nodes are one): [element index (its nearest listed ancestor), text, x, y, w, h, gap, case,
  // item, node, start, line boxes [[x, y, w, h]...], atomic] (`case`: the text-transform the screen
  // shows it in; `item`: what takes its glyphs away; `node`, `start`: where its characters are, for
  // per-character boxes; `atomic`: a select's option, measured whole).
  const runs = [];
  let chars = 0;
  const rect = (r) => [r.x0, r.y0, r.x1 - r.x0, r.y1 - r.y0];
  if (body) {
    seen.runs(body, (raw, parent, box, gap, how, node, segments) => {
      if (chars >= 40000) return;
      let owner = parent, at = -1;
      while (owner) { if (index.has(owner)) { at = index.get(owner); break; } owner = seen.flatParent(owner); }
      const item = cf.textItem(parent), id = cf.node(node), atomic = N.nodeType(node) !== 3 ? 1 : 0;
      const cased = how === "uppercase" || how === "lowercase" || how === "capitalize" ? how : "";
      segments.forEach((g, k) => {
        const t = raw.slice(g.start, g.end).slice(0, 2000);
        chars += t.length;
        const u = g.rects.reduce((a, r) => ({ x0: N.math.min(a.x0, r.x0), y0: N.math.min(a.y0, r.y0), x1: N.math.max(a.x1, r.x1), y1: N.math.max(a.y1, r.y1) }));
        runs.push([at, t, ...rect(u), gap || k > 0 ? 1 : 0, cased, item, id, g.start, g.rects.slice(0, 200).map(rect), atomic]);
      });
    }, 5000);
  }

  const counts = {};
  const everything = N.all(doc, "*");
  for (const el of everything) {
    const t = N.tag(el).toLowerCase();
    counts[t] = (counts[t] || 0) + 1;
  }
  const shownImages = seen.deepAll("img").filter((i) => seen.element(i).shown);
  // The context each canvas was given is the page's claim (noted in its world): it holds only
  // where the canvas really has a context of that kind (asking for the same kind returns it).
  const claims = N.Array.isArray(opts.contexts) ? opts.contexts : [];
  const shownCanvases = N.all(doc, "canvas").map((c, i) => [c, i]).filter(([c]) => seen.element(c).shown);  // (claims are per document canvas)
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
                 context: kind && N.getContext(c, kind) ? kind : "", item: cf.elementItem(c) };
      }),
      headings: [],
    },
    // Per item (last: every item above is registered by now): [kind (text, element, or box: an
    // element's own box paint), margin px its paint may reach
    // beyond its boxes, wide (it may land anywhere), the line boxes of all its own text]. What it
    // takes away may change any of those boxes, shown or not.
    items: N.store.items.map((it) => [it.how === "box" ? "box" : it.kind, +it.margin.toFixed(1), it.wide ? 1 : 0, it.lines]),
  };
}
