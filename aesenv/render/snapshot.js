// Snapshot of what a visitor sees: visible elements with boxes, own text and computed
// styles, plus page-level counts. Runs inside the page; returns plain JSON.
(maxNodes) => {
  const SKIP = new Set(["SCRIPT", "STYLE", "HEAD", "META", "LINK", "TITLE", "NOSCRIPT", "TEMPLATE", "BR", "WBR"]);
  const INTERACTIVE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL", "OPTION"]);
  const sx = window.scrollX, sy = window.scrollY;
  // Computed colors may be oklch()/lab()/color() (Tailwind v4 emits oklch); consumers get sRGB.
  const probe = document.createElement("canvas");
  probe.width = probe.height = 1;
  const pctx = probe.getContext("2d", { willReadFrequently: true });
  const rgbCache = new Map();
  const toRgb = (c) => {
    if (!c || c.startsWith("rgb") || !pctx) return c;
    if (rgbCache.has(c)) return rgbCache.get(c);
    pctx.clearRect(0, 0, 1, 1);
    pctx.fillStyle = "#000";
    pctx.fillStyle = c;
    pctx.fillRect(0, 0, 1, 1);
    const d = pctx.getImageData(0, 0, 1, 1).data;
    const out = d[3] === 255 ? `rgb(${d[0]}, ${d[1]}, ${d[2]})`
      : `rgba(${d[0]}, ${d[1]}, ${d[2]}, ${d[3] === 0 ? 0 : +(d[3] / 255).toFixed(3)})`;
    rgbCache.set(c, out);
    return out;
  };
  const transparent = (c) => !c || c === "transparent" || /rgba\([^)]*,\s*0\)$/.test(c);
  const bgCache = new Map();
  const effectiveBg = (el) => {
    const chain = [];
    let node = el, found = null;
    while (node && node.nodeType === 1) {
      if (bgCache.has(node)) { found = bgCache.get(node); break; }
      chain.push(node);
      const cs = getComputedStyle(node);
      if (cs.backgroundImage && cs.backgroundImage !== "none") { found = "image"; break; }
      if (!transparent(toRgb(cs.backgroundColor))) { found = toRgb(cs.backgroundColor); break; }
      node = node.parentElement;
    }
    if (found === null) found = "rgb(255, 255, 255)";
    for (const n of chain) bgCache.set(n, found);
    return found;
  };
  const ownText = (el) => {
    let t = "";
    for (const c of el.childNodes) if (c.nodeType === 3) t += c.textContent;
    return t.replace(/\s+/g, " ").trim();
  };
  const elements = [];
  const index = new Map();
  const all = document.body ? document.body.querySelectorAll("*") : [];
  let truncated = false;
  const bodyRect = document.body ? [document.body] : [];
  for (const el of [...bodyRect, ...all]) {
    if (SKIP.has(el.tagName)) continue;
    if (elements.length >= maxNodes) { truncated = true; break; }
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden" || parseFloat(cs.opacity) < 0.05) continue;
    const text = ownText(el);
    let parent = el.parentElement, pidx = -1;
    while (parent) { if (index.has(parent)) { pidx = index.get(parent); break; } parent = parent.parentElement; }
    index.set(el, elements.length);
    elements.push({
      tag: el.tagName.toLowerCase(),
      id: el.id || "",
      classes: (typeof el.className === "string" ? el.className : "").split(/\s+/).filter(Boolean).slice(0, 4),
      parent: pidx,
      x: r.left + sx, y: r.top + sy, w: r.width, h: r.height,
      text: text.slice(0, 300),
      text_len: text.length,
      color: toRgb(cs.color),
      background: effectiveBg(el),
      own_background: transparent(toRgb(cs.backgroundColor)) ? "" : toRgb(cs.backgroundColor),
      background_image: cs.backgroundImage !== "none",
      border: parseFloat(cs.borderTopWidth) > 0 || parseFloat(cs.borderLeftWidth) > 0,
      shadow: cs.boxShadow !== "none",
      radius: parseFloat(cs.borderTopLeftRadius) || 0,
      font_size: parseFloat(cs.fontSize),
      font_weight: parseInt(cs.fontWeight, 10) || 400,
      font_family: cs.fontFamily.split(",")[0].replace(/["']/g, "").trim(),
      line_height: cs.lineHeight === "normal" ? parseFloat(cs.fontSize) * 1.2 : parseFloat(cs.lineHeight),
      text_align: cs.textAlign,
      position: cs.position,
      z_index: cs.zIndex === "auto" ? 0 : (parseInt(cs.zIndex, 10) || 0),
      padding: [cs.paddingTop, cs.paddingRight, cs.paddingBottom, cs.paddingLeft].map(parseFloat),
      interactive: INTERACTIVE.has(el.tagName) || el.hasAttribute("onclick") || cs.cursor === "pointer" || el.tabIndex >= 0,
      transform_3d: /matrix3d/.test(cs.transform) || cs.transformStyle === "preserve-3d" || cs.perspective !== "none",
    });
  }
  const counts = {};
  for (const el of document.querySelectorAll("*")) {
    const t = el.tagName.toLowerCase();
    counts[t] = (counts[t] || 0) + 1;
  }
  const imgs = [...document.images];
  const de = document.documentElement;
  return {
    elements,
    truncated,
    metrics: {
      title: document.title || "",
      lang: de.getAttribute("lang") || "",
      doc_width: Math.max(de.scrollWidth, document.body ? document.body.scrollWidth : 0),
      doc_height: Math.max(de.scrollHeight, document.body ? document.body.scrollHeight : 0),
      viewport_width: window.innerWidth,
      viewport_height: window.innerHeight,
      node_count: document.getElementsByTagName("*").length,
      popups_blocked: self.__aesenvPopups || 0,
      tag_counts: counts,
      text_chars: document.body ? (document.body.innerText || "").replace(/\s+/g, " ").trim().length : 0,
      visible_text: document.body ? (document.body.innerText || "").replace(/\s+/g, " ").trim().slice(0, 20000) : "",
      images_total: imgs.length,
      images_broken: imgs.filter((i) => i.complete && i.naturalWidth === 0).length,
      canvases: [...document.querySelectorAll("canvas")].map((c) => {
        const r = c.getBoundingClientRect();
        return { w: r.width, h: r.height, context: c.__aesenvContext || "" };
      }),
      headings: [...document.querySelectorAll("h1,h2,h3,h4,h5,h6")].slice(0, 50).map((h) => ({
        level: parseInt(h.tagName[1], 10), text: (h.innerText || "").trim().slice(0, 120),
      })),
    },
  };
}
