// Labels the interactable elements of the live page (run by aesenv.interact.labeling in our
// isolated world), reading it only through the natives `N` (aesenv/render/natives.js: a form
// field named `tagName` changes nothing here) and labeling only what `N.seen` calls shown.
// `N.state.listened` (set beforehand from CDP) maps elements to the event types their listeners
// handle, so controls wired only with addEventListener are found too. The labeled elements are
// kept in our world (`N.state.marks`, out of the page's reach) so actions can address them by
// number; the page's DOM is not touched.
(N, opts) => {
  const doc = N.document;
  const listened = N.state.listened || new N.Map();
  const { width: vw, height: vh } = N.viewport();
  const POINTER = ["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick"];
  const INPUT_EVENTS = ["keydown", "keyup", "keypress", "input", "change"];
  const TEXT_TYPES = new N.Set(["", "text", "search", "email", "url", "tel", "password", "number"]);
  const CHOICE_TYPES = new N.Set(["checkbox", "radio", "range", "color", "date", "time", "file"]);
  const BUTTON_TYPES = new N.Set(["submit", "button", "reset", "image"]);
  const NATIVE = "a[href],button,input,select,textarea,summary,[role=button],[role=tab],[role=link],[role=switch],[role=checkbox],[role=menuitem]";
  const ACTIVE_CLASS = /(^|\s|-)(active|selected|current|open|on)(\s|$)/;
  const FOLLOWING = 4;  // Node.DOCUMENT_POSITION_FOLLOWING

  const tagOf = (el) => N.tag(el).toLowerCase();
  const attr = (el, name) => N.attr(el, name);
  const seen = N.seen({});
  // Shown (aesenv/render/seen.js, with the counterfactual's verdicts), big enough to aim at, and
  // showing something of its own: text the counterfactual found shown, its own paint (a styled
  // control is taken away in the render), or a picture in it that shows.
  const PICTURES = "img, svg, canvas, video, input, select, textarea, progress, meter";
  const visible = (el) => {
    if (!seen.element(el).shown) return false;
    const r = N.box(el);
    if (r.width < 4 || r.height < 4) return false;
    return seen.paints(el) !== "" || seen.textIn(el, 40) !== "" || N.all(el, PICTURES).some((x) => seen.element(x).shown);
  };
  const cssPath = (el) => {
    const parts = [];
    const root = N.root(doc);
    for (let node = el; node && N.nodeType(node) === 1 && node !== root; node = N.parent(node)) {
      const id = N.id(node);
      if (id && N.all(doc, "#" + N.escapeCss(id)).length === 1) {
        parts.unshift("#" + N.escapeCss(id));
        return parts.join(" > ");
      }
      const tag = N.tag(node);
      let nth = 1;
      for (let sib = N.previousSibling(node); sib; sib = N.previousSibling(sib)) if (N.tag(sib) === tag) nth++;
      parts.unshift(N.parent(node) ? `${tag.toLowerCase()}:nth-of-type(${nth})` : tag.toLowerCase());
    }
    return parts.join(" > ");
  };
  const inputType = (el) => N.String(N.prop(el, "type") || "");
  const textOf = (el) => {
    const tag = tagOf(el);
    const raw = attr(el, "aria-label") || (tag === "input" || tag === "textarea"
      ? (attr(el, "placeholder") || (BUTTON_TYPES.has(inputType(el)) ? N.String(N.prop(el, "value") || "") : "") || attr(el, "name") || "")
      : (N.innerText(el) || N.text(el) || "")) || attr(el, "title") || attr(el, "alt") || "";
    let text = raw.replace(/\s+/g, " ").trim();
    if (!text) {
      const img = N.all(el, "img[alt],svg title")[0];
      if (img) text = (attr(img, "alt") || N.text(img) || "").trim();
    }
    return text.slice(0, 60);
  };
  const typesOf = (el) => listened.get(el) || [];
  const kindOf = (el) => {
    const tag = tagOf(el), role = (attr(el, "role") || "").toLowerCase();
    const type = (attr(el, "type") || "").toLowerCase();
    const types = typesOf(el);
    const parent = N.parent(el);
    if (tag === "canvas") return "canvas";
    if (role === "tab") return "tab";
    if (tag === "textarea" || (N.isContentEditable(el) && !(parent && N.isContentEditable(parent)))) return "field";
    if (tag === "input") {
      if (type === "hidden") return null;
      if (BUTTON_TYPES.has(type)) return "button";
      if (CHOICE_TYPES.has(type)) return "choice";
      return TEXT_TYPES.has(type) || !type ? "field" : "choice";
    }
    if (tag === "select" || role === "checkbox" || role === "radio") return "choice";
    if (tag === "label") { const control = N.prop(el, "control"); return control && !visible(control) ? "choice" : null; }
    if (tag === "summary" || N.hasAttr(el, "aria-expanded") || role === "switch") return "toggle";
    if (tag === "button" || role === "button" || role === "menuitem") return "button";
    if (tag === "a" && N.hasAttr(el, "href")) return "link";
    if (N.hasAttr(el, "onclick") || types.some((t) => POINTER.includes(t) || INPUT_EVENTS.includes(t))) return "listener";
    if (tag !== "body" && N.hasAttr(el, "tabindex") && N.tabIndex(el) >= 0) return "listener";
    if (N.style(el)("cursor") === "pointer" && !(parent && N.style(parent)("cursor") === "pointer")) return "listener";
    return null;
  };
  const inOverlay = (el) => {
    if (N.closest(el, "dialog,[role=dialog],[role=alertdialog],[aria-modal=true]")) return true;
    const body = N.body(doc);
    for (let node = el; node && node !== body; node = N.parent(node)) {
      if (N.style(node)("position") === "fixed") return true;
    }
    return false;
  };
  // Covered: what a click at its centre would hit is something else that a person sees over it
  // (it, or what holds it short of holding the control too, paints or shows text). A cover that
  // paints nothing hides nothing: the control is a target, and a click on it meets the cover.
  const shows = (x) => seen.element(x).shown && (seen.paints(x) !== "" || seen.textIn(x, 20) !== "");
  const covered = (el, r) => {
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= vw || y >= vh) return false;  // off-screen: checked after scrolling
    const top = N.elementFromPoint(doc, x, y);
    if (!top || top === el || N.contains(el, top) || N.contains(top, el)
        || (tagOf(el) === "label" && top === N.prop(el, "control"))) return false;
    for (let node = top; node && !N.contains(node, el); node = N.parent(node)) if (shows(node)) return true;
    return false;
  };
  const submitFor = (field) => {
    const form = N.prop(field, "form");
    if (form) return N.all(form, "button:not([type]),button[type=submit],input[type=submit],input[type=image]")[0] || null;
    for (let node = N.parent(field), depth = 0; node && depth < 3; node = N.parent(node), depth++) {
      const found = N.all(node, "button,input[type=button],input[type=submit],[role=button]")
        .find((b) => b !== field && visible(b) && (N.position(field, b) & FOLLOWING));
      if (found) return found;
    }
    return null;
  };
  const selected = (el) => attr(el, "aria-selected") === "true" || attr(el, "aria-pressed") === "true" ||
    N.hasAttr(el, "aria-current") || N.prop(el, "checked") === true || ACTIVE_CLASS.test(N.String(N.className(el) || ""));

  const marks = [], infos = [];
  const root = N.body(doc) || N.root(doc);
  let scanned = 0;
  for (const el of N.all(root, "*")) {
    if (marks.length >= opts.maxMarks || ++scanned > opts.maxScan) break;
    if (N.closest(el, "svg") && tagOf(el) !== "svg" && !listened.has(el)) continue;
    const kind = kindOf(el);
    if (!kind || !visible(el)) continue;
    const parent = N.parent(el);
    if (parent && N.closest(parent, NATIVE) && kind !== "field" && kind !== "choice") continue;
    if (N.matches(el, ":disabled") || attr(el, "aria-disabled") === "true") continue;
    const r = N.box(el);
    if (kind === "listener" && r.width * r.height > 0.3 * vw * vh) continue;  // a wrapper delegating clicks
    if (covered(el, r)) continue;
    const types = [...new N.Set(typesOf(el).concat(N.hasAttr(el, "onclick") ? ["click"] : []))];
    const tag = tagOf(el), type = inputType(el);
    marks.push(el);
    infos.push({
      index: marks.length - 1,
      kind,
      tag,
      role: (attr(el, "role") || "").toLowerCase(),
      text: textOf(el),
      path: cssPath(el),
      box: { x: r.left, y: r.top, w: r.width, h: r.height },
      in_viewport: r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw,
      listeners: types,
      href: tag === "a" ? (attr(el, "href") || "") : "",
      input_type: tag === "input" ? (type || "text") : "",
      submits_form: !!N.prop(el, "form") && (type === "submit" || type === "image"),
      in_overlay: inOverlay(el),
      selected: selected(el),
    });
  }
  marks.forEach((el, i) => {
    if (infos[i].kind !== "field") return;
    const submit = submitFor(el);
    const at = submit ? marks.indexOf(submit) : -1;
    infos[i].submit = at >= 0 ? at : null;
  });
  N.state.marks = marks;
  const keyTypes = (t) => (t ? listened.get(t) || [] : []).filter((x) => x.startsWith("key"));
  const pageKeys = [doc, N.root(doc), N.body(doc)].flatMap(keyTypes);
  return { marks: infos, page_keys: pageKeys };
}
