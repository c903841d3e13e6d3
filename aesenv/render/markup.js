// The DOM as the page's scripts left it, as markup: what the execution channel lints beside the
// answer's source, so faulty markup a script writes (document.write, innerHTML, appendChild) is
// checked like faulty markup in the source. Runs in our isolated world (aesenv/render/inpage.py):
// every DOM call below is a getter or method taken from this world's own prototypes, which the
// page cannot reach (it can replace `XMLSerializer`, `outerHTML` or `getHTML` in its own world
// only), and it never runs page code (no cloning, no custom-element callbacks, nothing inserted).
//
// The markup is the browser's own serialisation (`Element.getHTML`) of the document element,
// with the doctype the document has (name, public and system ids, as XMLSerializer writes it:
// the HTML serialiser drops the ids) and open shadow roots inline as declarative shadow roots
// (`<template shadowrootmode="open">`), nested ones included, as are those the page made
// serializable and the closed ones the protocol handed our world before the snapshot.
//
// Size is bounded before anything is serialised: one walk over every node (shadow roots and
// template contents included) adds up what the markup will hold and stops at `opts.maxChars`,
// so a page that built a 100 MB DOM costs a walk up to the bound, never its serialisation. The
// serialisation is measured again (escaping can lengthen it) and refused over twice the bound.
// What is refused says so in `problem` (the page's: its DOM is too large, or the browser could
// not serialise it); an exception anywhere else is ours.
(N, opts) => {
  const { getOwnPropertyDescriptor, getPrototypeOf } = Object;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const find = (proto, name) => {
    for (let p = proto; p; p = getPrototypeOf(p)) {
      const d = getOwnPropertyDescriptor(p, name);
      if (d) return d;
    }
    throw new Error(`this browser has no ${name}`);
  };
  const get = (iface, name) => uncurry(find(globalThis[iface].prototype, name).get);
  const call = (iface, name) => uncurry(find(globalThis[iface].prototype, name).value);

  const doctypeOf = get("Document", "doctype"), createWalker = call("Document", "createTreeWalker");
  const nextNode = call("TreeWalker", "nextNode");
  const localName = get("Element", "localName"), shadowRoot = get("Element", "shadowRoot");
  const attributeNames = call("Element", "getAttributeNames"), attribute = call("Element", "getAttribute");
  const getHTML = call("Element", "getHTML");
  const dataLength = get("CharacterData", "length"), content = get("HTMLTemplateElement", "content");
  const isA = uncurry(Object.prototype.isPrototypeOf), TEMPLATE = globalThis.HTMLTemplateElement.prototype;
  const dtName = get("DocumentType", "name"), dtPublic = get("DocumentType", "publicId");
  const dtSystem = get("DocumentType", "systemId");
  const ELEMENT = 1, TEXT = 3, COMMENT = 8, SHOW = 0x1 | 0x4 | 0x80;  // elements, text, comments
  const maxChars = opts.maxChars;

  const doc = N.document, root = N.root(doc);
  // One walk: open shadow roots to serialise, and the length the markup will have (a lower bound).
  const shadowRoots = [];
  let chars = 0;
  const pending = root ? [root] : [];
  while (pending.length && chars <= maxChars) {
    const top = pending.pop();
    const walker = createWalker(doc, top, SHOW, null);
    for (let node = top; node && chars <= maxChars; node = nextNode(walker)) {
      const type = N.nodeType(node);
      if (type === TEXT || type === COMMENT) chars += dataLength(node) + (type === COMMENT ? 7 : 0);
      if (type !== ELEMENT) continue;  // those, and the shadow root or template content walked
      const name = localName(node);
      chars += 2 * name.length + 5;
      for (const attr of attributeNames(node)) chars += attr.length + attribute(node, attr).length + 4;
      // open roots, and closed ones the protocol handed our world (`N.store.closed`)
      const shadow = shadowRoot(node) || (N.store ? N.store.closed.get(node) : undefined);
      if (shadow) { shadowRoots.push(shadow); pending.push(shadow); }
      if (name === "template" && isA(TEMPLATE, node)) pending.push(content(node));
    }
  }
  const found = { chars, shadow_roots: shadowRoots.length };
  if (chars > maxChars) {
    return { ...found, problem: `the DOM the page's scripts left holds more than ${maxChars} characters of markup` };
  }

  const doctype = doctypeOf(doc);
  let head = "";
  if (doctype) {
    const publicId = dtPublic(doctype), systemId = dtSystem(doctype);
    head = `<!DOCTYPE ${dtName(doctype)}${publicId ? ` PUBLIC "${publicId}"` : ""}` +
      `${systemId ? `${publicId ? "" : " SYSTEM"} "${systemId}"` : ""}>\n`;
  }
  if (!root) return { ...found, html: head };
  // The document element's own tag, as the serialiser writes an element's (getHTML gives its children).
  const escape = (text) => text.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/"/g, "&quot;")
    .replace(/</g, "&lt;").replace(/>/g, "&gt;");
  let open = `<${localName(root)}`;
  for (const attr of attributeNames(root)) open += ` ${attr}="${escape(attribute(root, attr))}"`;
  let inner;
  try {
    inner = getHTML(root, { serializableShadowRoots: true, shadowRoots });
  } catch (e) {  // the browser's serialiser refused this DOM (a string past the engine's limit)
    return { ...found, problem: `the browser could not serialise the DOM: ${N.String(e && e.name)}` };
  }
  const html = `${head}${open}>${inner}</${localName(root)}>`;
  if (html.length > 2 * maxChars) {
    const problem = `the DOM the page's scripts left serialises to ${html.length} characters, over ${2 * maxChars}`;
    return { ...found, chars: html.length, problem };
  }
  return { ...found, chars: html.length, html };
}
