// Labels the interactable elements of the live page (run by aesenv.interact.labeling).
// `listened` (set beforehand from CDP) maps elements to the event types their listeners handle,
// so controls wired only with addEventListener are found too. The labeled elements are kept
// page-side (Symbol.for("aesenv.marks")) so actions can address them by number; the page's DOM
// is not touched.
(opts) => {
  const listened = globalThis[Symbol.for("aesenv.listened")] || new Map();
  const vw = innerWidth, vh = innerHeight;
  const POINTER = ["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick"];
  const INPUT_EVENTS = ["keydown", "keyup", "keypress", "input", "change"];
  const TEXT_TYPES = new Set(["", "text", "search", "email", "url", "tel", "password", "number"]);
  const CHOICE_TYPES = new Set(["checkbox", "radio", "range", "color", "date", "time", "file"]);
  const BUTTON_TYPES = new Set(["submit", "button", "reset", "image"]);
  const NATIVE = "a[href],button,input,select,textarea,summary,[role=button],[role=tab],[role=link],[role=switch],[role=checkbox],[role=menuitem]";
  const ACTIVE_CLASS = /(^|\s|-)(active|selected|current|open|on)(\s|$)/;

  const visible = (el) => {
    if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width >= 4 && r.height >= 4;
  };
  const cssPath = (el) => {
    const parts = [];
    for (let node = el; node && node.nodeType === 1 && node !== document.documentElement; node = node.parentElement) {
      if (node.id && document.querySelectorAll("#" + CSS.escape(node.id)).length === 1) {
        parts.unshift("#" + CSS.escape(node.id));
        return parts.join(" > ");
      }
      const tag = node.tagName.toLowerCase();
      let nth = 1;
      for (let sib = node.previousElementSibling; sib; sib = sib.previousElementSibling) if (sib.tagName === node.tagName) nth++;
      parts.unshift(node.parentElement ? `${tag}:nth-of-type(${nth})` : tag);
    }
    return parts.join(" > ");
  };
  const textOf = (el) => {
    const raw = el.getAttribute("aria-label") || (el.tagName === "INPUT" || el.tagName === "TEXTAREA"
      ? (el.getAttribute("placeholder") || (BUTTON_TYPES.has(el.type) ? el.value : "") || el.getAttribute("name") || "")
      : (el.innerText || el.textContent || "")) || el.getAttribute("title") || el.getAttribute("alt") || "";
    let text = raw.replace(/\s+/g, " ").trim();
    if (!text) { const img = el.querySelector && el.querySelector("img[alt],svg title"); if (img) text = (img.getAttribute("alt") || img.textContent || "").trim(); }
    return text.slice(0, 60);
  };
  const typesOf = (el) => listened.get(el) || [];
  const kindOf = (el) => {
    const tag = el.tagName.toLowerCase(), role = (el.getAttribute("role") || "").toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    const types = typesOf(el);
    if (tag === "canvas") return "canvas";
    if (role === "tab") return "tab";
    if (tag === "textarea" || (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable))) return "field";
    if (tag === "input") {
      if (type === "hidden") return null;
      if (BUTTON_TYPES.has(type)) return "button";
      if (CHOICE_TYPES.has(type)) return "choice";
      return TEXT_TYPES.has(type) || !type ? "field" : "choice";
    }
    if (tag === "select" || role === "checkbox" || role === "radio") return "choice";
    if (tag === "label") return el.control && !visible(el.control) ? "choice" : null;
    if (tag === "summary" || el.hasAttribute("aria-expanded") || role === "switch") return "toggle";
    if (tag === "button" || role === "button" || role === "menuitem") return "button";
    if (tag === "a" && el.hasAttribute("href")) return "link";
    if (el.hasAttribute("onclick") || types.some((t) => POINTER.includes(t) || INPUT_EVENTS.includes(t))) return "listener";
    if (tag !== "body" && el.hasAttribute("tabindex") && el.tabIndex >= 0) return "listener";
    const cs = getComputedStyle(el);
    if (cs.cursor === "pointer" && !(el.parentElement && getComputedStyle(el.parentElement).cursor === "pointer")) return "listener";
    return null;
  };
  const inOverlay = (el) => {
    if (el.closest("dialog,[role=dialog],[role=alertdialog],[aria-modal=true]")) return true;
    for (let node = el; node && node !== document.body; node = node.parentElement) {
      if (getComputedStyle(node).position === "fixed") return true;
    }
    return false;
  };
  const covered = (el, r) => {
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= vw || y >= vh) return false;  // off-screen: checked after scrolling
    const top = document.elementFromPoint(x, y);
    return !!top && top !== el && !el.contains(top) && !top.contains(el) && !(el.tagName === "LABEL" && top === el.control);
  };
  const submitFor = (field) => {
    if (field.form) {
      return field.form.querySelector("button:not([type]),button[type=submit],input[type=submit],input[type=image]");
    }
    for (let node = field.parentElement, depth = 0; node && depth < 3; node = node.parentElement, depth++) {
      const found = [...node.querySelectorAll("button,input[type=button],input[type=submit],[role=button]")]
        .find((b) => b !== field && visible(b) && (field.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING));
      if (found) return found;
    }
    return null;
  };

  const marks = [], infos = [];
  const root = document.body || document.documentElement;
  let scanned = 0;
  for (const el of root.querySelectorAll("*")) {
    if (marks.length >= opts.maxMarks || ++scanned > opts.maxScan) break;
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg" && !listened.has(el)) continue;
    const kind = kindOf(el);
    if (!kind || !visible(el)) continue;
    if (el.parentElement && el.parentElement.closest(NATIVE) && kind !== "field" && kind !== "choice") continue;
    if (el.disabled || el.getAttribute("aria-disabled") === "true") continue;
    const r = el.getBoundingClientRect();
    if (kind === "listener" && r.width * r.height > 0.3 * vw * vh) continue;  // a wrapper delegating clicks
    if (covered(el, r)) continue;
    const types = [...new Set(typesOf(el).concat(el.hasAttribute("onclick") ? ["click"] : []))];
    marks.push(el);
    infos.push({
      index: marks.length - 1,
      kind,
      tag: el.tagName.toLowerCase(),
      role: (el.getAttribute("role") || "").toLowerCase(),
      text: textOf(el),
      path: cssPath(el),
      box: { x: r.left, y: r.top, w: r.width, h: r.height },
      in_viewport: r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw,
      listeners: types,
      href: el.tagName === "A" ? (el.getAttribute("href") || "") : "",
      input_type: el.tagName === "INPUT" ? (el.type || "text") : "",
      submits_form: !!el.form && (el.type === "submit" || el.type === "image"),
      in_overlay: inOverlay(el),
      selected: el.getAttribute("aria-selected") === "true" || el.getAttribute("aria-pressed") === "true" ||
        el.hasAttribute("aria-current") || el.checked === true || ACTIVE_CLASS.test(typeof el.className === "string" ? el.className : ""),
    });
  }
  marks.forEach((el, i) => {
    if (infos[i].kind !== "field") return;
    const submit = submitFor(el);
    const at = submit ? marks.indexOf(submit) : -1;
    infos[i].submit = at >= 0 ? at : null;
  });
  globalThis[Symbol.for("aesenv.marks")] = marks;
  const keyTypes = (t) => (listened.get(t) || []).filter((x) => x.startsWith("key"));
  const pageKeys = [document, document.documentElement, document.body].flatMap(keyTypes);
  return { marks: infos, page_keys: pageKeys };
}
