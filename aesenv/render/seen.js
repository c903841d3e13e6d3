// What a person sees on the page: the one definition of "shown" that every measurement uses (the
// snapshot, the labels, the verifiers' probes, the project census, Webdev acceptance). It runs in
// our isolated world (aesenv/render/inpage.py) and reads the page through the natives `N`.
//
// An element is shown when some of its box lies inside the captured area (the full-page
// screenshot: the viewport's width, the document's height up to the capture cap) after every
// clip that applies to it (ancestors' overflow, clip-path, clip), and its effective opacity (its
// own times every ancestor's, `filter: opacity()` included) is not negligible. Text is shown when,
// besides, most of its line boxes survive those clips, its lines are tall enough to read, its ink
// is distinguishable from what is behind it (colour alpha, contrast with the background) and, in
// the first screen, nothing opaque covers it. The renderer then checks the screenshot itself for
// ink where the text is said to be (aesenv/render/shown.py). `<title>`, `<noscript>` and
// templates never lay out, so they are never page text.
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
    linePx: 6,          // a line of text shorter than this (after transforms) is not legible
    contrast: 1.25,     // text this close to its background in lightness...
    hue: 60,            // ...and within this of it on every channel is not distinguishable
    shownShare: 0.5,    // share of a text's line boxes that must survive the clips
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

  return (options) => {
    const opts = options || {};
    const doc = N.document, view = N.viewport(), root = N.root(doc), body = N.body(doc);
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
      while (node && !cache.has(node)) { chain.push(node); node = N.parent(node); }
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
      for (let a = N.parent(el); a; a = N.parent(a)) {
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

    // An element: its box, the part of it that can be seen, its effective opacity.
    const element = (el) => {
      const box = pageBox(el);
      const s = css(el);
      const seen = meet(box, clipOf(el));
      const o = opacity(el);
      const shown = s("visibility") === "visible" && s("display") !== "none" && o.o >= LIMITS.opacity
        && box.x1 - box.x0 >= 1 && box.y1 - box.y0 >= 1 && areaOf(seen) >= 1;
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
      for (let node = el, depth = 0; node && depth < 30; node = N.parent(node), depth++) {
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

    // One text node inside `el` (its parent element): is it shown, why not, and where it is.
    const text = (node, el) => {
      const s = css(el);
      if (s("visibility") !== "visible") return { shown: false, why: "hidden" };
      const o = opacity(el);
      if (o.o < LIMITS.opacity) return { shown: false, why: "transparent" };
      const paint = ink(el);
      if (!paint || paint.alpha * o.o < LIMITS.textAlpha) return { shown: false, why: "no ink" };
      const lines = N.lineBoxes(node);
      if (!lines.length) return { shown: false, why: "not laid out" };
      const own = factsOf(el);
      let clip = clipOf(el);
      if (own.content) clip = meet(clip, own.content);
      let total = 0, kept = 0, tall = 0;
      let union = null, biggest = null, biggestArea = 0;
      for (const r of lines) {
        const box = { x0: r.left + view.scrollX, y0: r.top + view.scrollY, x1: r.right + view.scrollX, y1: r.bottom + view.scrollY };
        total += areaOf(box);
        const part = meet(box, clip);
        const a = areaOf(part);
        if (a <= 0) continue;
        kept += a;
        if (part.y1 - part.y0 >= LIMITS.linePx) tall += 1;
        union = union ? { x0: min(union.x0, part.x0), y0: min(union.y0, part.y0), x1: max(union.x1, part.x1), y1: max(union.y1, part.y1) } : part;
        if (a > biggestArea) { biggestArea = a; biggest = part; }
      }
      if (!total || kept < LIMITS.shownShare * total) return { shown: false, why: "clipped or off the captured area" };
      if (!tall) return { shown: false, why: "too small to read" };
      const fontPx = num(s("font-size")) || 16;
      if (o.blur > 0.5 * fontPx) return { shown: false, why: "blurred" };
      if (!paint.clipped && paint.colour) {
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
      if (cx >= 0 && cy >= 0 && cx < view.width && cy < view.height && s("pointer-events") !== "none") {
        const top = N.elementFromPoint(doc, cx, cy);
        if (top && top !== el && !N.contains(el, top) && !N.contains(top, el) && paintsOpaque(top)
            && !inThreeD(top) && !inThreeD(el)) {
          return { shown: false, why: "covered" };
        }
      }
      return { shown: true, why: "", box: union };
    };

    // Every text node under `el` in document order, with its parent element and whether a
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
    const runs = (el, visit, limit) => {
      const stack = [[el, false]];
      let gap = false, count = 0;
      while (stack.length && count < (limit || 1e9)) {
        const [node, leaving] = stack.pop();
        if (N.nodeType(node) === 3) {
          const raw = N.text(node) || "";
          if (!/\S/.test(raw)) { if (raw) gap = true; continue; }
          const parent = N.parent(node);
          if (!parent) continue;
          const t = text(node, parent);
          if (!t.shown) continue;
          count += 1;
          visit(raw, parent, t.box, gap || /^\s/.test(raw), css(parent)("text-transform"));
          gap = /\s$/.test(raw);
          continue;
        }
        if (N.nodeType(node) !== 1 || SKIP.has(N.tag(node))) continue;
        if (N.tag(node) === "BR") { gap = true; continue; }
        if (N.tag(node) === "SELECT") {  // a closed select shows its chosen option; a list box, its options
          const e = element(node), options = N.list(N.prop(node, "options") || []);
          if (!e.shown || !ink(node) || !options.length) continue;
          const listed = N.prop(node, "size") > 1 || N.hasAttr(node, "multiple");
          const chosen = listed ? options.slice(0, 20) : [options[N.math.max(0, N.prop(node, "selectedIndex"))] || options[0]];
          for (const o of chosen) {
            count += 1;
            visit(N.text(o) || "", node, e.seen, true, css(node)("text-transform"));
          }
          gap = true;
          continue;
        }
        const block = !inline(node);
        if (leaving) { if (block) gap = true; continue; }
        if (block) gap = true;
        stack.push([node, true]);
        const kids = N.childNodes(node);
        for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], false]);
      }
    };
    // The shown text inside `el` (itself and its descendants), whitespace collapsed, bounded.
    const textIn = (el, limit) => {
      let out = "";
      const cap = limit || 20000;
      runs(el, (raw, _parent, _box, gap, how) => { if (out.length < cap) out += (gap && out ? " " : "") + cased(raw, how); });
      return out.replace(/\s+/g, " ").trim().slice(0, cap);
    };

    // What an element paints by itself, apart from its text: "style" (a background that stands
    // out from what is behind it, a border, a shadow, an outline), "replaced" (an image, canvas,
    // video, frame, form field: the screenshot must show ink in its box), "broken" (an image that
    // did not load: counted as such, never as a picture), or "" (nothing: a bare wrapper shows
    // only what it contains).
    const REPLACED = new N.Set(["IMG", "CANVAS", "VIDEO", "IFRAME", "OBJECT", "EMBED", "INPUT", "SELECT", "TEXTAREA",
                                "PROGRESS", "METER"]);
    const paints = (el) => {
      const tag = N.tag(el);
      if (tag === "IMG" && N.prop(el, "complete") && N.prop(el, "naturalWidth") === 0) return "broken";
      if (REPLACED.has(tag) || (tag === "svg" && N.isSvg(el) && !N.isSvg(N.parent(el) || el))) return "replaced";
      if (N.isSvg(el)) return "";  // shapes inside an SVG: the svg element stands for them
      const s = css(el);
      if (s("background-image") && s("background-image") !== "none") return "style";
      const own = rgba(toRgb(s("background-color")));
      if (own && own[3] >= 0.1) {
        const up = N.parent(el) ? background(N.parent(el)) : "rgb(255, 255, 255)";
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
        if (content && content !== "none" && content !== "normal" && content !== '""') return "replaced";
      }
      return "";
    };

    return { captured, docHeight, css, element, text, runs, textIn, background, firstBackground, toRgb, opacity: (el) => opacity(el).o,
             paintsOpaque, clipOf, elementOf, paints, limits: LIMITS };
  };
}
