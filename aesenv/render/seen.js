// What a person sees on the page, first pass: the one cheap filter every measurement uses (the
// snapshot, the labels, the verifiers' probes, the project census, Webdev acceptance). It runs in
// our isolated world (aesenv/render/inpage.py) and reads the page through the natives `N`.
//
// This filter only narrows what is measured; it never decides alone that something is shown. What
// passes it is then taken away from the captured image (aesenv/render/counterfactual.py): content
// counts only where the pixels change without it. Those verdicts are kept per node in our world
// (`N.store`), and once they exist every read here honours them: a text node the counterfactual
// found unshown is no page text, an element found unshown is not on the page.
//
// An element passes when some of its box lies inside the captured area (the full-page
// screenshot: the viewport's width, the document's height up to the capture cap) after every
// clip that applies to it (ancestors' overflow, clip-path, clip), the browser says it renders
// (`checkVisibility`: not in a skipped subtree such as `content-visibility: hidden`,
// `hidden=until-found` or a closed `<details>`), and its effective opacity is not negligible.
// Text passes when, besides, its lines are tall enough to read, its ink is distinguishable from
// what is behind it and, in the first screen, nothing opaque covers it; the characters a clip
// cuts off are dropped one by one. The last two only the pixels can settle (the colour behind may
// not be the one the styles say, a cover may paint nothing): with `pixels` set (the snapshot,
// which the counterfactual measure follows) they are left to the pixels, so content a filter
// would drop by them is measured, and faulty content cannot leave the record by them.
// `<title>`, `<noscript>` and templates never lay out.
//
// Walks follow the flat tree, the tree that renders: into shadow roots (open ones through the
// DOM, closed ones through the protocol, see `N.store.closed`), through slots to what is slotted.
//
// `N.seen(options)` starts one measuring pass; its caches hold for that call only (the page may
// change between calls). Every walk up the tree is iterative: a page nested a hundred thousand
// deep must not overflow our stack.
(N) => {
  const num = N.parseFloat, max = N.math.max, min = N.math.min;
  const CLIPPING = new N.Set(["hidden", "clip", "scroll", "auto"]);
  const OPAQUE_TAGS = new N.Set(["IMG", "VIDEO", "CANVAS", "IFRAME", "OBJECT", "EMBED", "PICTURE"]);
  const LIMITS = {
    opacity: 0.1,       // effective opacity below this is not seen
    textAlpha: 0.15,    // text ink (colour alpha × opacity) below this is not seen
    // A line box shorter than this (CSS px at the capture's scale, after transforms) is not
    // legible. ANSI/HFES 100-2007 puts the smallest character height at 16 minutes of arc for
    // reading and 10 for text read only in passing; 10' at a 50 cm viewing distance is 1.45 mm,
    // 5.5 CSS px (1/96 in) of capital height, a font of about 7.9 px, whose line box (ascent to
    // descent, ~1.15 em in common faces) is 9 px.
    linePx: 9,
    contrast: 1.25,     // text this close to its background in lightness...
    hue: 60,            // ...and within this of it on every channel is not distinguishable
    coverOpacity: 0.9,  // an element over the text at least this opaque hides it
  };

  const meet = (a, b) => ({ x0: max(a.x0, b.x0), y0: max(a.y0, b.y0), x1: min(a.x1, b.x1), y1: min(a.y1, b.y1) });
  const areaOf = (r) => max(0, r.x1 - r.x0) * max(0, r.y1 - r.y0);
  const rgba = (text) => {
    const m = /^rgba?\(([^)]*)\)$/.exec(N.String(text || "").trim());
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map((v) => (v.endsWith("%") ? num(v) / 100 : num(v)));
    return p.length >= 3 ? [p[0], p[1], p[2], p.length > 3 ? p[3] : 1] : null;
  };
  const channel = (c) => { const v = c / 255; return v <= 0.03928 ? v / 12.92 : N.math.pow((v + 0.055) / 1.055, 2.4); };
  const luminance = (c) => 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  const contrast = (a, b) => { const la = luminance(a), lb = luminance(b); return (max(la, lb) + 0.05) / (min(la, lb) + 0.05); };
  const blend = (fg, alpha, bg) => [0, 1, 2].map((i) => fg[i] * alpha + bg[i] * (1 - alpha));

  // The flat tree: a node's parent as rendered (the slot it is assigned to, the host of the shadow
  // root it sits at the top of), an element's shadow root (open, or closed as the protocol gave it
  // to us), and the children that render in its place.
  const store = N.store;
  const flatParent = (node) => {
    const slot = N.assignedSlot(node);
    if (slot) return slot;
    const up = N.parentNode(node);
    if (!up) return null;
    if (N.isShadowRoot(up)) return N.host(up);
    return N.nodeType(up) === 1 ? up : null;
  };
  const shadowOf = (el) => N.openShadowRoot(el) || store.closed.get(el) || null;
  const flatChildren = (el) => {
    const shadow = shadowOf(el);
    if (shadow) return N.childNodes(shadow);
    if (N.tag(el) === "SLOT") { const slotted = N.assignedNodes(el); if (slotted.length) return slotted; }
    return N.childNodes(el);
  };
  // Every root under the document a selector must look in: the document and each shadow root.
  const rootsOf = (doc) => {
    const roots = [doc], todo = [doc];
    while (todo.length) {
      const at = todo.pop();
      for (const el of N.all(at, "*")) {
        const shadow = shadowOf(el);
        if (shadow) { roots.push(shadow); todo.push(shadow); }
      }
    }
    return roots;
  };

  return (options) => {
    const opts = options || {};
    const doc = N.document, view = N.viewport(), root = N.root(doc), body = N.body(doc);
    let roots = null;
    // `N.all` through every shadow root, document order within each root.
    const deepAll = (selector) => { roots = roots || rootsOf(doc); return roots.flatMap((r) => N.all(r, selector)); };
    // Elements under `el` in flat-tree order, parents before children (iterative), at most `limit`.
    const flatElements = (el, limit) => {
      const out = [], stack = [el], cap = limit || 1e9;
      while (stack.length && out.length < cap) {
        const node = stack.pop();
        if (N.nodeType(node) !== 1) continue;
        out.push(node);
        const kids = flatChildren(node);
        for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      }
      return out;
    };
    const docHeight = max(root ? N.scrollHeight(root) : 0, body ? N.scrollHeight(body) : 0);
    const maxHeight = opts.maxHeight || 8000;
    const captured = { x0: 0, y0: 0, x1: view.width, y1: max(view.height, min(docHeight, maxHeight)) };

    // Computed colours may be oklch()/lab()/color() (Tailwind v4 emits oklch): a 1-px canvas of
    // ours (never attached) turns them into sRGB.
    let probe = null;
    const rgbCache = new N.Map();
    const toRgb = (c) => {
      if (!c || c.startsWith("rgb")) return c;
      if (rgbCache.has(c)) return rgbCache.get(c);
      if (probe === null) {
        const canvas = N.createElement(doc, "canvas");
        N.setWidth(canvas, 1);
        N.setHeight(canvas, 1);
        probe = N.getContext(canvas, "2d", { willReadFrequently: true }) || false;
      }
      let out = c;
      if (probe) {
        N.ctx2d.clearRect(probe, 0, 0, 1, 1);
        N.ctx2d.setFill(probe, "#000");
        N.ctx2d.setFill(probe, c);
        N.ctx2d.fillRect(probe, 0, 0, 1, 1);
        const d = N.ctx2d.pixel(probe);
        out = d[3] === 255 ? `rgb(${d[0]}, ${d[1]}, ${d[2]})`
          : `rgba(${d[0]}, ${d[1]}, ${d[2]}, ${d[3] === 0 ? 0 : +(d[3] / 255).toFixed(3)})`;
      }
      rgbCache.set(c, out);
      return out;
    };
    const transparent = (c) => { const p = rgba(c); return !p || p[3] === 0; };

    const styles = new N.Map();
    const css = (el) => { let s = styles.get(el); if (!s) { s = N.style(el); styles.set(el, s); } return s; };
    const pageBox = (el) => {
      const r = N.box(el);
      return { x0: r.left + view.scrollX, y0: r.top + view.scrollY, x1: r.right + view.scrollX, y1: r.bottom + view.scrollY };
    };
    const elementOf = (node) => (node && N.nodeType(node) === 1 ? node : null);

    // Folds `own(node)` from the root down, caching per node: `combine(own, fromParent)`.
    const folded = (cache, own, combine, start) => {
      const chain = [];
      let node = start;
      while (node && !cache.has(node)) { chain.push(node); node = flatParent(node); }
      let acc = node ? cache.get(node) : undefined;
      for (let i = chain.length - 1; i >= 0; i--) {
        acc = combine(own(chain[i]), acc);
        cache.set(chain[i], acc);
      }
      return acc;
    };

    const opacities = new N.Map();
    const ownOpacity = (el) => {
      const s = css(el);
      let o = num(s("opacity"));
      if (!(o >= 0)) o = 1;
      const f = /opacity\(\s*([\d.]+)(%?)\s*\)/.exec(s("filter") || "");
      if (f) o *= f[2] ? num(f[1]) / 100 : num(f[1]);
      return { o, blur: (() => { const b = /blur\(\s*([\d.]+)px\s*\)/.exec(s("filter") || ""); return b ? num(b[1]) : 0; })() };
    };
    // { o: effective opacity, blur: px of blur along the ancestors }
    const opacity = (el) => folded(opacities, ownOpacity,
      (own, up) => ({ o: own.o * (up ? up.o : 1), blur: own.blur + (up ? up.blur : 0) }), el);

    // What each element contributes to the clips of what it contains.
    const facts = new N.Map();
    const length = (text, whole) => (N.String(text).endsWith("%") ? num(text) / 100 * whole : num(text));
    const shapeBox = (shape, box) => {  // the box a clip-path leaves, or null when unknown
      const w = box.x1 - box.x0, h = box.y1 - box.y0;
      const inset = /^inset\(([^)]*)\)/.exec(shape);
      if (inset) {
        const v = inset[1].split(/\s+round\s+/)[0].trim().split(/\s+/);
        const [t, r, b, l] = [v[0], v[1] ?? v[0], v[2] ?? v[0], v[3] ?? v[1] ?? v[0]];
        return { x0: box.x0 + length(l, w), y0: box.y0 + length(t, h), x1: box.x1 - length(r, w), y1: box.y1 - length(b, h) };
      }
      const circle = /^(circle|ellipse)\(([^)]*)\)/.exec(shape);
      if (circle) {
        const [radii, at] = circle[2].split(/\s+at\s+/);
        const rs = (radii || "").trim().split(/\s+/).filter(Boolean);
        const c = (at || "50% 50%").trim().split(/\s+/);
        const cx = box.x0 + length(c[0] === "center" ? "50%" : c[0], w), cy = box.y0 + length((c[1] || "50%") === "center" ? "50%" : (c[1] || "50%"), h);
        const rx = rs.length && !/closest|farthest/.test(rs[0]) ? length(rs[0], circle[1] === "circle" ? N.math.sqrt((w * w + h * h) / 2) : w) : w / 2;
        const ry = rs.length > 1 && !/closest|farthest/.test(rs[1]) ? length(rs[1], h) : (circle[1] === "circle" ? rx : h / 2);
        return { x0: cx - rx, y0: cy - ry, x1: cx + rx, y1: cy + ry };
      }
      const polygon = /^polygon\(([^)]*)\)/.exec(shape);
      if (polygon) {
        const points = polygon[1].replace(/^\s*(nonzero|evenodd)\s*,/, "").split(",").map((p) => p.trim().split(/\s+/));
        const xs = points.map((p) => box.x0 + length(p[0], w)), ys = points.map((p) => box.y0 + length(p[1] || "0", h));
        if (!xs.length || xs.some((x) => !N.isFinite(x)) || ys.some((y) => !N.isFinite(y))) return null;
        let area2 = 0;  // a polygon of no area (all points on a line) shows nothing
        for (let i = 0; i < xs.length; i++) { const j = (i + 1) % xs.length; area2 += xs[i] * ys[j] - xs[j] * ys[i]; }
        if (N.math.abs(area2) < 1) return { x0: 0, y0: 0, x1: 0, y1: 0 };
        return { x0: min(...xs), y0: min(...ys), x1: max(...xs), y1: max(...ys) };
      }
      return null;
    };
    const factsOf = (el) => {
      let f = facts.get(el);
      if (f) return f;
      const s = css(el);
      const position = s("position"), display = s("display");
      const transformed = s("transform") !== "none" || s("perspective") !== "none" || s("filter") !== "none"
        || /paint|layout|strict|content/.test(s("contain") || "") || /transform|perspective|filter/.test(s("will-change") || "");
      const clipsX = display !== "contents" && CLIPPING.has(s("overflow-x"));
      const clipsY = display !== "contents" && CLIPPING.has(s("overflow-y"));
      const path = s("clip-path"), legacy = (position === "absolute" || position === "fixed") ? s("clip") : "auto";
      let box = null, self = null, content = null;
      if (clipsX || clipsY || (path && path !== "none") || (legacy && legacy !== "auto")) box = pageBox(el);
      if (path && path !== "none") self = shapeBox(path, box);
      if (legacy && legacy.startsWith("rect(")) {
        const v = legacy.slice(5, -1).split(/[\s,]+/).filter(Boolean);
        const at = (i, fallback) => (v[i] === "auto" || v[i] === undefined ? fallback : num(v[i]));
        const r = { x0: box.x0 + at(3, 0), y0: box.y0 + at(0, 0), x1: box.x0 + at(1, box.x1 - box.x0), y1: box.y0 + at(2, box.y1 - box.y0) };
        self = self ? meet(self, r) : r;
      }
      if (clipsX || clipsY) {  // the padding box clips what the element contains
        const bl = num(s("border-left-width")) || 0, br = num(s("border-right-width")) || 0;
        const bt = num(s("border-top-width")) || 0, bb = num(s("border-bottom-width")) || 0;
        content = { x0: clipsX ? box.x0 + bl : -Infinity, x1: clipsX ? box.x1 - br : Infinity,
                    y0: clipsY ? box.y0 + bt : -Infinity, y1: clipsY ? box.y1 - bb : Infinity };
      }
      f = { position, blockForAbsolute: position !== "static" || transformed, blockForFixed: transformed, self, content };
      facts.set(el, f);
      return f;
    };

    // The area `el`'s own painting can show in: the captured area, cut by the clips of the
    // ancestors that clip it. An absolutely positioned element escapes the overflow clips of the
    // ancestors below its containing block, a fixed one those of every ancestor that is not
    // transformed; clip-path clips everything inside its element.
    const UNBOUNDED = { x0: -Infinity, y0: -Infinity, x1: Infinity, y1: Infinity };
    const clips = new N.Map();
    const clipOf = (el) => {
      if (clips.has(el)) return clips.get(el);
      let rect = UNBOUNDED;
      const own = factsOf(el);
      if (own.self) rect = meet(rect, own.self);
      let mode = own.position === "fixed" ? "fixed" : own.position === "absolute" ? "absolute" : "flow";
      for (let a = flatParent(el); a; a = flatParent(a)) {
        const f = factsOf(a);
        const clipsMe = mode === "flow" || (mode === "absolute" && f.blockForAbsolute) || (mode === "fixed" && f.blockForFixed);
        if (clipsMe && f.content) rect = meet(rect, f.content);
        if (f.self) rect = meet(rect, f.self);
        if (clipsMe) mode = "flow";
        if (f.position === "fixed") mode = "fixed";
        else if (f.position === "absolute" && mode === "flow") mode = "absolute";
      }
      rect = meet(rect, captured);
      clips.set(el, rect);
      return rect;
    };

    // Whether the browser renders `el` (a box of its own, or `display: contents` standing for its
    // children, as a slot does), outside any subtree it skips.
    const renders = (el) => css(el)("display") === "contents"
      || N.checkVisibility(el, { contentVisibilityAuto: false }) !== false;
    // An element: its box, the part of it that can be seen, its effective opacity.
    const element = (el) => {
      const box = pageBox(el);
      const s = css(el);
      const seen = meet(box, clipOf(el));
      const o = opacity(el);
      const shown = s("visibility") === "visible" && s("display") !== "none" && o.o >= LIMITS.opacity
        && box.x1 - box.x0 >= 1 && box.y1 - box.y0 >= 1 && areaOf(seen) >= 1 && renders(el)
        && store.elementVerdict(el) !== false;
      return { box, seen, opacity: o.o, shown };
    };

    const backgrounds = new N.Map();
    // The colour behind `el`'s text: the background colours of it and its ancestors composited
    // from the root (white) up, translucent layers blended over what is below; "image" where an
    // image or gradient is painted in between.
    const WHITE = [255, 255, 255, 1];
    const background = (el) => {
      const out = folded(backgrounds, (node) => {
        const s = css(node);
        if (s("background-image") && s("background-image") !== "none") return "image";
        return rgba(toRgb(s("background-color")));
      }, (own, up) => {
        const below = up === undefined ? WHITE : up;
        if (own === "image") return "image";
        if (!own || own[3] === 0) return below;
        if (below === "image") return own[3] >= 0.95 ? own : "image";
        const a = own[3];
        return [...blend(own, a, below), 1];
      }, el);
      return out === "image" ? "image" : `rgb(${N.math.round(out[0])}, ${N.math.round(out[1])}, ${N.math.round(out[2])})`;
    };

    // The first background its ancestors (or itself) paint, as declared: a colour (translucent
    // ones as they are), "image", or white at the root. What the snapshot reports per element.
    const firsts = new N.Map();
    const firstBackground = (el) => folded(firsts, (node) => {
      const s = css(node);
      if (s("background-image") && s("background-image") !== "none") return "image";
      const own = toRgb(s("background-color"));
      return transparent(own) ? null : own;
    }, (own, up) => own || up || null, el) || "rgb(255, 255, 255)";

    // In a 3D-transformed scene the browser's hit order is not its paint order (back faces,
    // depth): there only the pixels say what is covered.
    const inThreeD = (el) => {
      for (let node = el, depth = 0; node && depth < 30; node = flatParent(node), depth++) {
        const s = css(node);
        if (s("transform-style") === "preserve-3d" || s("backface-visibility") === "hidden") return true;
      }
      return false;
    };

    const paintsOpaque = (el) => {
      if (opacity(el).o < LIMITS.coverOpacity) return false;
      if (OPAQUE_TAGS.has(N.tag(el))) return true;
      const s = css(el);
      if (s("background-image") && s("background-image") !== "none") return true;
      const bg = rgba(toRgb(s("background-color")));
      return !!bg && bg[3] >= LIMITS.coverOpacity;
    };

    // The ink of `el`'s text, or null when it has none: fill colour and alpha, or the painted
    // alternatives (background-clip: text, a stroke, a shadow).
    const ink = (el) => {
      const s = css(el);
      const fill = N.isSvg(el) ? s("fill") : s("-webkit-text-fill-color") || s("color");
      const colour = rgba(toRgb(fill));
      const alpha = (colour ? colour[3] : 0) * (N.isSvg(el) ? (num(s("fill-opacity")) >= 0 ? num(s("fill-opacity")) : 1) : 1);
      if (colour && alpha >= LIMITS.textAlpha) return { colour, alpha, clipped: false };
      const clipText = /text/.test(s("-webkit-background-clip") || "") || /text/.test(s("background-clip") || "");
      if (clipText && s("background-image") !== "none") return { colour: null, alpha: 1, clipped: true };
      const stroke = rgba(toRgb(N.isSvg(el) ? s("stroke") : s("-webkit-text-stroke-color")));
      const strokeWidth = num(N.isSvg(el) ? s("stroke-width") : s("-webkit-text-stroke-width")) || 0;
      if (stroke && stroke[3] >= LIMITS.textAlpha && strokeWidth >= 0.5) return { colour: stroke, alpha: stroke[3], clipped: false };
      const shadow = /rgba?\([^)]*\)/.exec(s("text-shadow") || "");
      if (shadow && (rgba(shadow[0]) || [0, 0, 0, 0])[3] >= LIMITS.textAlpha) return { colour: rgba(shadow[0]), alpha: 1, clipped: false };
      return null;
    };

    // One text node inside `el` (its parent element): is it shown, why not, and where. `segments`
    // are the stretches of its characters that pass, each with its line boxes cut to the clip: the
    // whole node, unless a clip cuts some characters off or some lines are too small to read, then
    // the characters are judged one by one (a line clipped to 63% shows 63% of its words).
    const pageRect = (r) => ({ x0: r.left + view.scrollX, y0: r.top + view.scrollY, x1: r.right + view.scrollX, y1: r.bottom + view.scrollY });
    const legible = (part) => areaOf(part) > 0 && part.y1 - part.y0 >= LIMITS.linePx;
    const text = (node, el) => {
      const s = css(el);
      if (s("visibility") !== "visible") return { shown: false, why: "hidden" };
      if (!renders(el)) return { shown: false, why: "in a subtree the browser skips" };
      const o = opacity(el);
      if (o.o < LIMITS.opacity) return { shown: false, why: "transparent" };
      const paint = ink(el);
      if (!paint || paint.alpha * o.o < LIMITS.textAlpha) return { shown: false, why: "no ink" };
      const lines = N.lineBoxes(node);
      if (!lines.length) return { shown: false, why: "not laid out" };
      const own = factsOf(el);
      let clip = clipOf(el);
      if (own.content) clip = meet(clip, own.content);
      let whole = true, biggest = null, biggestArea = 0;
      const parts = [];
      for (const r of lines) {
        const box = pageRect(r), part = meet(box, clip), a = areaOf(part);
        if (a < areaOf(box) - 0.5 || !legible(part)) whole = false;
        if (!legible(part)) continue;
        parts.push(part);
        if (a > biggestArea) { biggestArea = a; biggest = part; }
      }
      if (!parts.length) {
        return { shown: false, why: lines.some((r) => areaOf(meet(pageRect(r), clip)) > 0) ? "too small to read" : "clipped or off the captured area" };
      }
      const fontPx = num(s("font-size")) || 16;
      if (o.blur > 0.5 * fontPx) return { shown: false, why: "blurred" };
      if (!opts.pixels && !paint.clipped && paint.colour) {
        const behind = background(el);
        const bg = behind === "image" ? null : rgba(behind);
        const fg = bg && blend(paint.colour, paint.alpha * o.o, bg);
        // Indistinct: close in lightness *and* in hue (red on green is ugly, not invisible).
        if (bg && contrast(fg, bg) < LIMITS.contrast && N.math.max(...[0, 1, 2].map((i) => N.math.abs(fg[i] - bg[i]))) < LIMITS.hue) {
          return { shown: false, why: "same colour as its background" };
        }
      }
      // Covered: in the first screen the browser can say what is on top at the text's centre
      // (text that ignores the pointer cannot be hit, so only its pixels can say).
      const cx = (biggest.x0 + biggest.x1) / 2 - view.scrollX, cy = (biggest.y0 + biggest.y1) / 2 - view.scrollY;
      if (!opts.pixels && cx >= 0 && cy >= 0 && cx < view.width && cy < view.height && s("pointer-events") !== "none") {
        const top = N.elementFromPoint(doc, cx, cy);
        if (top && top !== el && !N.contains(el, top) && !N.contains(top, el) && paintsOpaque(top)
            && !inThreeD(top) && !inThreeD(el)) {
          return { shown: false, why: "covered" };
        }
      }
      const length = (N.text(node) || "").length;
      const segments = whole ? [{ start: 0, end: length, rects: parts }] : characters(node, clip, length);
      if (!segments.length) return { shown: false, why: "clipped or off the captured area" };
      const union = segments.flatMap((g) => g.rects).reduce((u, r) => ({ x0: min(u.x0, r.x0), y0: min(u.y0, r.y0), x1: max(u.x1, r.x1), y1: max(u.y1, r.y1) }));
      return { shown: true, why: "", box: union, segments };
    };
    // The stretches of a node's characters whose boxes lie (mostly) inside `clip` on a legible
    // line, each with one box per line it spans. A node longer than `MAX_CHARS` that a clip cuts is
    // not judged at all (a character's box costs a walk of its line: none of it counts).
    const MAX_CHARS = 4000;
    const characters = (node, clip, length) => {
      if (length > MAX_CHARS) return [];
      const boxes = N.charBoxes(node, 0, length);
      const segments = [];
      let current = null;
      for (let i = 0; i < boxes.length; i++) {
        const rect = boxes[i].length ? pageRect(boxes[i][0]) : null;
        const part = rect && meet(rect, clip);
        const inside = rect && (areaOf(rect) <= 0 ? false : areaOf(part) >= 0.5 * areaOf(rect)) && legible(part);
        if (!inside) { current = null; continue; }
        if (!current) { current = { start: i, end: i + 1, rects: [] }; segments.push(current); }
        current.end = i + 1;
        const last = current.rects[current.rects.length - 1];
        if (last && N.math.abs(last.y0 - part.y0) < 1 && N.math.abs(last.y1 - part.y1) < 1 && part.x0 >= last.x0 - 1) {
          last.x1 = max(last.x1, part.x1);
        } else current.rects.push({ x0: part.x0, y0: part.y0, x1: part.x1, y1: part.y1 });
      }
      return segments;
    };

    // Every text node under `el` in flat-tree order, with its parent element and whether a
    // break (whitespace, or the edge of a non-inline element) came before it; iterative, and
    // never into what cannot lay out (scripts, styles, templates, noscript).
    const SKIP = new N.Set(["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "HEAD", "TITLE"]);
    const inline = (el) => /^inline/.test(css(el)("display") || "");
    // Text as it reads on screen: `text-transform` applied.
    const cased = (raw, how) => {
      if (how === "uppercase") return raw.toUpperCase();
      if (how === "lowercase") return raw.toLowerCase();
      if (how === "capitalize") return raw.replace(/(^|\s)(\S)/g, (m, a, b) => a + b.toUpperCase());
      return raw;
    };
    // `visit(raw, parent, box, gap, how, node, segments)` per text node that passes (an option
    // of a select stands for its text, with the select as its parent).
    const runs = (el, visit, limit) => {
      const stack = [[el, false]];
      let gap = false, count = 0;
      while (stack.length && count < (limit || 1e9)) {
        const [node, leaving] = stack.pop();
        if (N.nodeType(node) === 3) {
          const raw = N.text(node) || "";
          if (!/\S/.test(raw)) { if (raw) gap = true; continue; }
          const parent = flatParent(node);
          if (!parent) continue;
          const t = text(node, parent);
          if (!t.shown) continue;
          count += 1;
          visit(raw, parent, t.box, gap || /^\s/.test(raw), css(parent)("text-transform"), node, t.segments);
          gap = /\s$/.test(raw);
          continue;
        }
        if (N.nodeType(node) !== 1 || SKIP.has(N.tag(node))) continue;
        if (N.tag(node) === "BR") { gap = true; continue; }
        if (N.tag(node) === "SELECT") {  // a closed select shows its chosen option; a list box, the options it renders
          const e = element(node), options = N.list(N.prop(node, "options") || []);
          if (!e.shown || !ink(node) || !options.length) continue;
          const listed = N.prop(node, "size") > 1 || N.hasAttr(node, "multiple");
          const chosen = listed ? options.filter((o) => css(o)("display") !== "none" && renders(o)).slice(0, 20)
            : [options[N.math.max(0, N.prop(node, "selectedIndex"))] || options[0]];
          for (const o of chosen) {
            const label = N.text(o) || "", r = pageBox(o);
            const own = listed && areaOf(meet(r, e.seen)) >= 1 ? meet(r, e.seen) : e.seen;
            count += 1;
            visit(label, node, own, true, css(node)("text-transform"), o, [{ start: 0, end: label.length, rects: [own] }]);
          }
          gap = true;
          continue;
        }
        const block = !inline(node);
        if (leaving) { if (block) gap = true; continue; }
        if (block) gap = true;
        stack.push([node, true]);
        if (!renders(node)) continue;  // a skipped subtree (content-visibility, until-found, closed details)
        const kids = flatChildren(node);
        for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], false]);
      }
    };
    // The characters of a text node that count, by the counterfactual's verdict where it has one
    // (`store.text`: the shown [start, end) stretches), otherwise by this filter's segments.
    const counted = (raw, node, segments) => {
      const verdict = store.textVerdict(node);
      const stretches = verdict !== undefined ? verdict : segments.map((g) => [g.start, g.end]);
      return stretches.map(([a, b]) => raw.slice(a, b)).join(" ");
    };
    // The shown text inside `el` (itself and its descendants), whitespace collapsed, bounded.
    const textIn = (el, limit) => {
      let out = "";
      const cap = limit || 20000;
      runs(el, (raw, _parent, _box, gap, how, node, segments) => {
        if (out.length >= cap) return;
        const shown = counted(raw, node, segments);
        if (/\S/.test(shown)) out += (gap && out ? " " : "") + cased(shown, how);
      });
      return out.replace(/\s+/g, " ").trim().slice(0, cap);
    };

    // What an element paints by itself, apart from its text: "style" (a background that stands
    // out from what is behind it, a border, a shadow, an outline), "replaced" (an image, canvas,
    // video, frame, form field: it counts where taking it away changes the pixels), "generated"
    // (content of its ::before/::after, likewise), "broken" (an image that did not load: counted
    // as such, never as a picture), or "" (nothing: a bare wrapper shows only what it contains).
    const REPLACED = new N.Set(["IMG", "CANVAS", "VIDEO", "IFRAME", "OBJECT", "EMBED", "INPUT", "SELECT", "TEXTAREA",
                                "PROGRESS", "METER"]);
    const paints = (el) => {
      const tag = N.tag(el);
      if (tag === "IMG" && N.prop(el, "complete") && N.prop(el, "naturalWidth") === 0) return "broken";
      if (REPLACED.has(tag) || (tag === "svg" && N.isSvg(el) && !N.isSvg(flatParent(el) || el))) return "replaced";
      if (N.isSvg(el)) return "";  // shapes inside an SVG: the svg element stands for them
      const s = css(el);
      if (s("background-image") && s("background-image") !== "none") return "style";
      const own = rgba(toRgb(s("background-color")));
      if (own && own[3] >= 0.1) {
        const up = flatParent(el) ? background(flatParent(el)) : "rgb(255, 255, 255)";
        const below = up === "image" ? null : rgba(up);
        if (!below || [0, 1, 2].some((i) => N.math.abs(blend(own, own[3], below)[i] - below[i]) > 10)) return "style";
      }
      for (const side of ["top", "right", "bottom", "left"]) {
        const w = num(s(`border-${side}-width`)) || 0, st = s(`border-${side}-style`);
        const c = rgba(toRgb(s(`border-${side}-color`)));
        if (w >= 0.5 && st !== "none" && st !== "hidden" && c && c[3] >= 0.1) return "style";
      }
      if (s("box-shadow") && s("box-shadow") !== "none") return "style";
      if (s("outline-style") !== "none" && (num(s("outline-width")) || 0) > 0) return "style";
      // Generated content (an icon font's glyph, a bullet, a badge): the pixels must show it.
      for (const pseudo of ["::before", "::after"]) {
        const content = N.style(el, pseudo)("content");
        if (content && content !== "none" && content !== "normal" && content !== '""') return "generated";
      }
      return "";
    };

    return { captured, docHeight, css, element, text, runs, textIn, background, firstBackground, toRgb, opacity: (el) => opacity(el).o,
             paintsOpaque, clipOf, elementOf, paints, limits: LIMITS, flatParent, flatElements, deepAll, pageBox };
  };
}
