// Taking content away, in our isolated world: the page-side half of the counterfactual measure
// (aesenv/render/counterfactual.py holds the other half: groups, captures, pixels).
//
// What is measured is registered first (`textItem`, `elementItem`: one item per element whose own
// text, or whose whole painting, is taken away together). `hide(ids)` then takes a group of items
// away with a style sheet of ours, adopted by each root the items live in (a document or a shadow
// root: no node in the tree, so no selector or observer of the page's sees it), keyed by an
// attribute whose name is new for every call (no selector of the page's can name it). It reads
// back what the browser computed: an item whose removal did not take (a rule of the page's won
// the cascade) or that took something else with it (a child's text that should have stayed) is
// unmeasurable, and is never credited. `restore()` puts everything back as it was.
//
// Text is taken away as glyphs: fill, stroke and shadow transparent, on the element's own text;
// the element's children get back what they inherited, so only its own characters go. A
// `background-clip: text` background is the glyphs of the text it is clipped to, so it goes too.
// Decorations and emphasis marks stay: a line under nothing is not text. Elements are taken away
// whole (opacity 0), with all they contain. Transitions are off for what changes, so the capture
// sees the change at once.
(N, seen) => {
  const store = N.store;
  const TEXT_PROPS = ["-webkit-text-fill-color", "text-shadow", "-webkit-text-stroke-width"];
  const SVG_TEXT_PROPS = ["fill", "stroke", "text-shadow"];
  const num = N.parseFloat, max = N.math.max, abs = N.math.abs;
  const itemOf = new N.Map();

  // The extent, beyond its boxes, that an item's own paint may reach (its shadows, its stroke,
  // the drop shadows of its ancestors' filters), and whether it may land anywhere at all (an SVG
  // filter, a reflection, an SVG `use` or pattern that repeats it elsewhere): such an item is
  // measured in a group of its own, since what it takes away elsewhere would be taken for another's.
  const shadowReach = (text) => {
    let reach = 0;
    for (const part of N.String(text || "").split(/,(?![^(]*\))/)) {
      const lengths = (part.replace(/rgba?\([^)]*\)|#[0-9a-f]+|[a-z]+\([^)]*\)/gi, "").match(/-?[\d.]+px/g) || []).map((v) => abs(num(v)));
      reach = max(reach, (lengths[0] || 0) + (lengths[2] || 0) * 2, (lengths[1] || 0) + (lengths[2] || 0) * 2);
    }
    return reach;
  };
  const reaches = new N.Map();
  const reachOf = (el) => {  // { px, wide } along el and its flat ancestors
    if (reaches.has(el)) return reaches.get(el);
    let px = 0, wide = false;
    const chain = [];
    for (let a = el; a; a = seen_.flatParent(a)) {
      if (reaches.has(a)) { const up = reaches.get(a); px += up.px; wide = wide || up.wide; break; }
      chain.push(a);
      const s = N.style(a);
      const filter = s("filter") || "", backdrop = s("backdrop-filter") || "";
      if (/url\(/.test(filter) || /url\(/.test(backdrop) || (s("-webkit-box-reflect") || "none") !== "none") wide = true;
      const drops = filter.match(/drop-shadow\((?:[^()]|\([^)]*\))*\)/g) || [];
      for (const d of drops) px += shadowReach(d.slice(12, -1));
    }
    const out = { px, wide };
    reaches.set(el, out);
    return out;
  };
  let seen_ = seen({});
  const fresh = () => { seen_ = seen({}); reaches.clear(); referenced = null; };

  // SVG content another element draws again elsewhere (`<use>`, `<feImage>` by reference): the
  // ids those elements point at, per document.
  let referenced = null;
  const repeated = (el) => {
    if (!N.isSvg(el)) return false;
    if (referenced === null) {
      referenced = new N.Set();
      for (const user of seen_.deepAll("use, feImage")) {
        const href = N.attr(user, "href") || N.attr(user, "xlink:href") || "";
        if (href.startsWith("#")) referenced.add(href.slice(1));
      }
    }
    if (!referenced.size) return false;
    for (let a = el; a && N.isSvg(a); a = seen_.flatParent(a)) if (referenced.has(N.id(a))) return true;
    return false;
  };
  const rect = (r) => [r.left + N.viewport().scrollX, r.top + N.viewport().scrollY, r.right - r.left, r.bottom - r.top];
  // Every line box of `el`'s own text, shown or not: taking its text away may change any of them;
  // and a list item's marker, painted in its text's colour beside its first line.
  const ownLines = (el) => {
    const out = [];
    for (const node of elementChildren(el, true)) {
      if (N.nodeType(node) !== 3) continue;
      for (const r of N.lineBoxes(node)) if (r.right > r.left && r.bottom > r.top && out.length < 200) out.push(rect(r));
    }
    const s = N.style(el);
    if (s("display") === "list-item" && (s("list-style-type") !== "none" || s("list-style-image") !== "none") && out.length) {
      const em = num(s("font-size")) || 16, box = N.box(el), first = out[0];
      const left = N.math.min(box.left + N.viewport().scrollX, first[0]) - 4 * em;
      out.push([left, first[1], first[0] + first[2] - left, first[3]]);
    }
    return out;
  };

  // `how` for an element: "whole" (it and all it holds), "pseudo" (its ::before/::after only) or
  // "box" (the paint of its own box: background, border, shadow, outline).
  const register = (el, kind, how) => {
    const key = kind + ":" + (how || "");
    let byKind = itemOf.get(el);
    if (!byKind) { byKind = {}; itemOf.set(el, byKind); }
    if (byKind[key] !== undefined) return byKind[key];
    const s = N.style(el), up = reachOf(el);
    let px = up.px;
    if (kind === "text") px += shadowReach(s("text-shadow")) + (num(s("-webkit-text-stroke-width")) || 0) + (N.isSvg(el) ? num(s("stroke-width")) || 0 : 0);
    else px += shadowReach(s("box-shadow")) + (s("outline-style") !== "none" ? (num(s("outline-width")) || 0) + abs(num(s("outline-offset")) || 0) : 0);
    const id = store.items.length;
    store.items.push({ kind, el, how: how || "", margin: px, wide: up.wide || repeated(el),
                       lines: kind === "text" ? ownLines(el) : [] });
    byKind[key] = id;
    return id;
  };

  // The element whose `background-clip: text` background paints `el`'s glyphs, if any.
  const clippedBackground = (el) => {
    for (let a = el, depth = 0; a && depth < 50; a = seen_.flatParent(a), depth++) {
      const s = N.style(a);
      const clip = s("background-clip") || s("-webkit-background-clip") || "";
      if (/text/.test(clip) && s("background-image") !== "none") return a;
    }
    return null;
  };
  // An element's children in the flat tree (elements only, unless `all`).
  const elementChildren = (el, all) => {
    const shadow = N.openShadowRoot(el) || store.closed.get(el);
    const kids = shadow ? N.childNodes(shadow) : N.tag(el) === "SLOT" && N.assignedNodes(el).length ? N.assignedNodes(el) : N.childNodes(el);
    return all ? kids : kids.filter((k) => N.nodeType(k) === 1);
  };

  let hidden = null;  // { attr, marked: [el], sheets: [[root, sheet]] }

  const hide = ({ ids, nonce }) => {
    restore();
    fresh();
    const attr = `data-${nonce}`;
    const sel = (value) => { const one = `[${attr}~="${value}"]`; return one + one + one + one; };  // above a plain class rule
    const rules = new N.Map();  // root -> [rule]
    // Elements that take the same rule share its tag: one rule per element made each marked
    // element match against every other's (3,000 boxes: 1.5 s of style recalc, now 1 rule).
    const tags = new N.Map();  // rule key -> tag
    const written = new N.Map();  // root -> the tags given their rule there
    const mark = (el, value) => {
      const before = N.attr(el, attr);
      N.setAttr(el, attr, before ? `${before} ${value}` : value);
      marked.push(el);
    };
    const rule = (el, key, make) => {  // make(selector) -> the rule's text
      let tag = tags.get(key);
      if (tag === undefined) { tag = `t${tags.size}`; tags.set(key, tag); }
      mark(el, tag);
      const root = N.rootNode(el);
      if (!rules.has(root)) rules.set(root, []);
      if (written.has(root) && written.get(root).has(tag)) return;
      if (!written.has(root)) written.set(root, new N.Set());
      written.get(root).add(tag);
      rules.get(root).push(make(sel(tag)));
    };
    const marked = [], expect = [], unmeasurable = [];
    const transparent = "rgba(0, 0, 0, 0)";
    const hiding = new N.Set(ids.map((id) => store.items[id]).filter((item) => item && item.kind === "text").map((item) => item.el));
    // Every style is read before the first attribute is written: a read after a write makes the
    // browser compute the page's styles again, once per item.
    const reads = [];
    for (const id of ids) {
      const item = store.items[id];
      if (!item || !N.isConnected(item.el)) { unmeasurable.push(id); continue; }
      if (item.kind !== "text") { reads.push({ id, item }); continue; }
      const el = item.el, svg = N.isSvg(el);
      // (a child whose own text goes in this group too keeps its own rule; a select's options are
      // its text, so they go with it)
      const children = N.tag(el) === "SELECT" ? []
        : elementChildren(el).filter((c) => !hiding.has(c)).map((c) => [c, N.style(c), N.isSvg(c)]);
      const kept = children.map(([c, st, isSvg]) => [c, (isSvg ? SVG_TEXT_PROPS : TEXT_PROPS).map((q) => [q, st(q)])]);
      reads.push({ id, item, svg, kept, painter: clippedBackground(el) });
    }
    const plain = (body) => (selector) => `${selector} { ${body} }`;
    for (const { id, item, svg, kept, painter } of reads) {
      const el = item.el;
      if (item.kind === "element" && item.how === "pseudo") {
        rule(el, "pseudo", (selector) => `${selector}::before, ${selector}::after { opacity: 0 !important; transition: none !important; }`);
        expect.push([id, el, "opacity", "0", "::before"], [id, el, "opacity", "0", "::after"]);
        continue;
      }
      if (item.kind === "element" && item.how === "box") {  // its own box's paint, nothing it holds
        const body = "background: none !important; border-color: transparent !important; border-image: none !important;"
          + " box-shadow: none !important; outline-color: transparent !important; transition: none !important;";
        rule(el, body, plain(body));
        expect.push([id, el, "background-image", "none"], [id, el, "box-shadow", "none"],
                    [id, el, "background-color", transparent]);
        continue;
      }
      if (item.kind === "element") {
        const body = "opacity: 0 !important; transition: none !important;";
        rule(el, body, plain(body));
        expect.push([id, el, "opacity", "0"]);
        continue;
      }
      // text: the element's own glyphs (and its ::first-letter; not ::first-line: it styles the
      // children on that line too)
      const body = svg
        ? "fill: transparent !important; stroke: transparent !important; text-shadow: none !important; transition: none !important;"
        : "-webkit-text-fill-color: transparent !important; text-shadow: none !important; -webkit-text-stroke-width: 0px !important; transition: none !important;";
      rule(el, "text " + body, (selector) => `${selector} { ${body} }\n${selector}::first-letter { ${body} }`);
      expect.push([id, el, svg ? "fill" : "-webkit-text-fill-color", transparent]);
      if (painter) {
        const pbody = "background-image: none !important; background-color: transparent !important; transition: none !important;";
        rule(painter, pbody, plain(pbody));
      }
      for (const [c, values] of kept) {
        const cbody = values.map(([q, v]) => `${q}: ${v} !important;`).join(" ") + " transition: none !important;";
        rule(c, cbody, plain(cbody));
        for (const [q, v] of values) expect.push([id, c, q, v]);
      }
    }
    const sheets = [];
    for (const [root, list] of rules) {
      const sheet = N.sheet(list.join("\n"));
      if (N.adopt(root, sheet)) sheets.push([root, sheet]);
    }
    hidden = { attr, marked, sheets };
    const failed = new N.Set(unmeasurable);
    for (const [id, el, prop, want, pseudo] of expect) if (N.style(el, pseudo)(prop) !== want) failed.add(id);
    return { unmeasurable: [...failed] };
  };

  const restore = () => {
    if (!hidden) return true;
    for (const el of hidden.marked) N.removeAttr(el, hidden.attr);
    for (const [root, sheet] of hidden.sheets) N.unadopt(root, sheet);
    hidden = null;
    return true;
  };

  // Character boxes of registered text nodes: [[node, start, end], ...] -> per request, per
  // character, its first box in page pixels (null where it has none).
  const MAX_NODE_CHARS = 4000;  // a longer node's character boxes cost a walk of its line each: none
  const chars = (requests) => {
    const view = N.viewport();
    return requests.map(([node, start, end]) => (N.text(store.nodes[node]) || "").length > MAX_NODE_CHARS ? []
      : N.charBoxes(store.nodes[node], start, end).map((boxes) => {
      if (!boxes.length) return null;
      const b = boxes[0];
      return [b.left + view.scrollX, b.top + view.scrollY, b.right - b.left, b.bottom - b.top];
    }));
  };

  // The verdicts, kept for every later read in this document (`seen` honours them).
  const record = ({ text, elements }) => {
    for (const [node, stretches] of text) if (store.nodes[node]) store.keepText(store.nodes[node], stretches);
    for (const [id, shown] of elements) { const item = store.items[id]; if (item) store.keepElement(item.el, !!shown); }
    return true;
  };

  const node = (textNode) => { store.nodes.push(textNode); return store.nodes.length - 1; };
  const reset = () => { restore(); store.items.length = 0; store.nodes.length = 0; itemOf.clear(); fresh(); };

  return { textItem: (el) => register(el, "text"), elementItem: (el, how) => register(el, "element", how || "whole"), node, reset,
           hide, restore, chars, record, item: (id) => store.items[id] };
}
