// The DOM and JavaScript built-ins our in-page scripts use, taken from the prototypes before the
// page's own scripts run (the renderer's prelude calls this first thing in every document and
// keeps the result on `window.__aesenv__`, which the page can neither replace nor delete).
// Our scripts never read a property of a page object directly, because the page decides what
// those reads return: a <form> returns its field named `id` as `form.id` (and `tagName`,
// `getAttribute`, `elements`...), `<img name="title">` is `document.title`, a global
// `class Map` or `let scrollY` shadows the built-in for every script in the page, a page may
// patch `Element.prototype.getBoundingClientRect` or `window.getComputedStyle`. Every read goes
// through a getter or method captured here, called on the object (`N.tag(el)`).
// `state` is what our scripts keep per document (frames run, canvas contexts, labeled marks).
// The prototypes of JavaScript's own arrays, strings and regular expressions are trusted: a page
// that breaks `Array.prototype.map` breaks itself first.
(global) => {
  const { getOwnPropertyDescriptor, getPrototypeOf, freeze } = Object;
  // f -> (self, ...args) => f.call(self, ...args), immune to later patches of `call` and `bind`
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const describe = (proto, name) => {
    for (let p = proto; p; p = getPrototypeOf(p)) {
      const found = getOwnPropertyDescriptor(p, name);
      if (found) return found;
    }
    return undefined;
  };
  const missing = () => undefined;  // a feature this browser lacks
  const getter = (proto, name) => { const d = proto && describe(proto, name); return d && d.get ? uncurry(d.get) : missing; };
  const setter = (proto, name) => { const d = proto && describe(proto, name); return d && d.set ? uncurry(d.set) : missing; };
  const method = (proto, name) => {
    const d = proto && describe(proto, name);
    return d && typeof d.value === "function" ? uncurry(d.value) : missing;
  };
  const isA = uncurry(Object.prototype.isPrototypeOf);  // isA(proto, object)
  const proto = (name) => (global[name] ? global[name].prototype : undefined);
  const D = proto("Document"), E = proto("Element"), Nd = proto("Node"), H = proto("HTMLElement"), S = proto("SVGElement");

  // Collections: their length through the native getter, their items by index (which no page can shadow).
  const NODE_LIST = proto("NodeList");
  const nodeListLength = getter(NODE_LIST, "length"), collectionLength = getter(proto("HTMLCollection"), "length");
  const list = (collection) => {
    const n = isA(NODE_LIST, collection) ? nodeListLength(collection) : collectionLength(collection);
    const out = [];
    for (let i = 0; i < n; i++) out[i] = collection[i];
    return out;
  };
  const elementAll = method(E, "querySelectorAll"), documentAll = method(D, "querySelectorAll");
  const FRAGMENT = proto("DocumentFragment"), fragmentAll = method(FRAGMENT, "querySelectorAll");
  const isDocument = (node) => isA(D, node);
  const queryAll = (root, selector) => (isDocument(root) ? documentAll(root, selector)
    : isA(FRAGMENT, root) ? fragmentAll(root, selector) : elementAll(root, selector));

  const rect = method(E, "getBoundingClientRect");
  const RECT = proto("DOMRectReadOnly");
  const rectGet = ["left", "top", "width", "height", "right", "bottom"].map((name) => [name, getter(RECT, name)]);
  const box = (el) => {
    const r = rect(el), out = {};
    for (const [name, get] of rectGet) out[name] = get(r);
    return out;
  };

  const computed = method(global, "getComputedStyle"), propertyValue = method(proto("CSSStyleDeclaration"), "getPropertyValue");
  const style = (el, pseudo) => { const cs = computed(global, el, pseudo); return (name) => propertyValue(cs, name); };

  const htmlTabIndex = getter(H, "tabIndex"), svgTabIndex = getter(S, "tabIndex");
  const htmlContentEditable = getter(H, "isContentEditable");
  const htmlStyle = getter(H, "style"), svgStyle = getter(S, "style");
  const htmlText = getter(H, "innerText"), textContent = getter(Nd, "textContent");
  const htmlFocus = method(H, "focus"), svgFocus = method(S, "focus");
  const htmlBlur = method(H, "blur"), svgBlur = method(S, "blur");

  // Properties of form controls and other element types, by interface (`prop(el, "form")`).
  const TYPED = ["HTMLInputElement", "HTMLButtonElement", "HTMLSelectElement", "HTMLTextAreaElement", "HTMLLabelElement",
    "HTMLOutputElement", "HTMLFieldSetElement", "HTMLObjectElement", "HTMLImageElement", "HTMLAnchorElement",
    "HTMLOptionElement"];
  const PROPS = ["type", "value", "form", "control", "checked", "options", "selectedIndex", "complete", "naturalWidth", "href", "size"];
  const typed = {};
  for (const name of PROPS) {
    typed[name] = [];
    for (const iface of TYPED) {
      const p = proto(iface), d = p && getOwnPropertyDescriptor(p, name);
      if (d && d.get) typed[name].push([p, uncurry(d.get), d.set ? uncurry(d.set) : missing]);
    }
  }
  const entryFor = (el, name) => { for (const entry of typed[name]) if (isA(entry[0], el)) return entry; return null; };

  const EventCtor = global.Event, dispatchEvent = method(proto("EventTarget"), "dispatchEvent");
  const addListener = method(proto("EventTarget"), "addEventListener");
  const Observer = global.MutationObserver, MessageChannelCtor = global.MessageChannel;
  const observe = method(proto("MutationObserver"), "observe"), takeRecords = method(proto("MutationObserver"), "takeRecords");
  const postMessage = method(proto("MessagePort"), "postMessage"), setOnMessage = setter(proto("MessagePort"), "onmessage");
  const cssEscape = global.CSS && global.CSS.escape;
  const stringify = JSON.stringify, parse = JSON.parse;
  const PROMISE = proto("Promise"), promiseThen = method(PROMISE, "then");
  const encode = (value) => (value === undefined ? undefined : stringify(value));
  const contexts = new global.WeakMap(), W = proto("WeakMap");
  const contextHas = method(W, "has"), contextSet = method(W, "set"), contextGet = method(W, "get");
  const webgl = [];  // every WebGL context the page made, to wait for what it drew
  const glFinish = [proto("WebGLRenderingContext"), proto("WebGL2RenderingContext")]
    .filter(Boolean).map((p) => [p, method(p, "finish")]);
  const finishDrawing = (gl) => { for (const [p, finish] of glFinish) if (isA(p, gl)) return finish(gl); return undefined; };
  const math = freeze({ max: Math.max, min: Math.min, abs: Math.abs, sqrt: Math.sqrt, pow: Math.pow, round: Math.round });
  const StringCtor = global.String, PromiseCtor = global.Promise;
  // A text node's line boxes, as laid out (after transforms), in viewport coordinates.
  const createRange = method(D, "createRange"), RANGE = proto("Range");
  const selectNodeContents = method(RANGE, "selectNodeContents"), rangeRects = method(RANGE, "getClientRects");
  const rectListLength = getter(proto("DOMRectList"), "length"), rectListItem = method(proto("DOMRectList"), "item");
  const rectsOf = (rects) => {
    const out = [];
    for (let i = 0, n = rectListLength(rects); i < n; i++) {
      const r = rectListItem(rects, i), one = {};
      for (const [name, get] of rectGet) one[name] = get(r);
      out[out.length] = one;
    }
    return out;
  };
  const lineBoxes = (node) => {
    const range = createRange(global.document);
    selectNodeContents(range, node);
    return rectsOf(rangeRects(range));
  };

  // Shadow trees and the flat tree (what renders): an element's open shadow root, a node's root
  // (a document, or a shadow root open or closed), a slotted node's slot, a shadow root's host.
  const SR = proto("ShadowRoot"), openRoot = getter(E, "shadowRoot"), rootNode = method(Nd, "getRootNode");
  const parentNode = getter(Nd, "parentNode"), hostOf = getter(SR, "host");
  const elementSlot = getter(E, "assignedSlot"), textSlot = getter(proto("Text"), "assignedSlot");
  const assigned = method(proto("HTMLSlotElement"), "assignedNodes");
  const isShadowRoot = (node) => !!SR && isA(SR, node);
  const nodeType = getter(Nd, "nodeType");
  const setAttribute = method(E, "setAttribute"), removeAttribute = method(E, "removeAttribute");
  // Style sheets of our own, adopted by a document or a shadow root: no node in the tree, so no
  // selector or observer of the page's sees them.
  const SheetCtor = global.CSSStyleSheet, SHEET = proto("CSSStyleSheet"), replaceSync = method(SHEET, "replaceSync");
  const adopted = [D, SR].filter(Boolean).map((p) => [p, getter(p, "adoptedStyleSheets"), setter(p, "adoptedStyleSheets")]);
  const adoptedOf = (root) => { for (const [p, get, set] of adopted) if (isA(p, root)) return [get, set]; return null; };
  const setStart = method(RANGE, "setStart"), setEnd = method(RANGE, "setEnd");
  // The boxes of characters [start, end) of a text node, one list per character (UTF-16 units).
  const charBoxes = (node, start, end) => {
    const range = createRange(global.document), out = [];
    for (let i = start; i < end; i++) {
      setStart(range, node, i);
      setEnd(range, node, i + 1);
      out[out.length] = rectsOf(rangeRects(range));
    }
    return out;
  };

  return freeze({
    window: global, document: global.document,
    Map: global.Map, Set: global.Set, Array: global.Array, WeakSet: global.WeakSet, WeakMap: global.WeakMap, Promise: PromiseCtor, String: StringCtor,
    math, parseFloat: global.parseFloat, parseInt: global.parseInt, isFinite: Number.isFinite,
    parse,
    // What one of our scripts returns, as JSON (awaited first if it is a promise): Playwright's
    // own serialization of an object looks up `Map` at run time, and a page's `class Map` breaks it.
    reply: (value) => (isA(PROMISE, value) ? promiseThen(value, encode) : encode(value)),
    escapeCss: (text) => (cssEscape ? cssEscape(text) : text),

    // The window and the document.
    viewport: (() => {
      const w = getter(global, "innerWidth"), h = getter(global, "innerHeight");
      const sx = getter(global, "scrollX"), sy = getter(global, "scrollY");
      return () => ({ width: w(global), height: h(global), scrollX: sx(global), scrollY: sy(global) });
    })(),
    hash: (() => { const get = getter(global.location, "hash"); return () => get(global.location); })(),
    body: getter(D, "body"), root: getter(D, "documentElement"), title: getter(D, "title"),
    readyState: getter(D, "readyState"), activeElement: getter(D, "activeElement"),
    fontsReady: (() => {
      const fonts = getter(D, "fonts"), ready = getter(proto("FontFaceSet"), "ready");
      return () => { const set = fonts(global.document); return set ? ready(set) : undefined; };
    })(),
    elementFromPoint: method(D, "elementFromPoint"), createElement: method(D, "createElement"),
    head: getter(D, "head"), animations: method(D, "getAnimations"),
    effectTiming: (() => {
      const effect = getter(proto("Animation"), "effect"), timing = method(proto("AnimationEffect"), "getComputedTiming");
      return (animation) => { const e = effect(animation); return e ? timing(e) : null; };
    })(),
    finish: method(proto("Animation"), "finish"), cancel: method(proto("Animation"), "cancel"),
    playState: getter(proto("Animation"), "playState"), playbackRate: getter(proto("Animation"), "playbackRate"),
    currentTime: getter(proto("Animation"), "currentTime"), setCurrentTime: setter(proto("Animation"), "currentTime"),
    isTransition: (() => {
      const transition = proto("CSSTransition");
      return (animation) => !!transition && isA(transition, animation);
    })(),
    // Every element under `root` (a document, a shadow root or an element) matching `selector`, as an array.
    all: (root, selector) => list(queryAll(root, selector)),
    list,

    // Nodes and elements.
    nodeType, parent: getter(Nd, "parentElement"), isConnected: getter(Nd, "isConnected"),
    childNodes: (() => { const get = getter(Nd, "childNodes"); return (node) => list(get(node)); })(),
    text: textContent, setText: setter(Nd, "textContent"), append: method(Nd, "appendChild"),
    innerText: (el) => (isA(H, el) ? htmlText(el) : textContent(el)),
    contains: method(Nd, "contains"), position: method(Nd, "compareDocumentPosition"),
    tag: getter(E, "tagName"), id: getter(E, "id"), className: getter(E, "className"),
    attr: method(E, "getAttribute"), hasAttr: method(E, "hasAttribute"),
    closest: method(E, "closest"), matches: method(E, "matches"), previousSibling: getter(E, "previousElementSibling"),
    checkVisibility: method(E, "checkVisibility"),
    scrollWidth: getter(E, "scrollWidth"), scrollHeight: getter(E, "scrollHeight"),
    reveal: (() => {  // scroll an element into view (centred, where Chrome's own call is there)
      const ifNeeded = describe(E, "scrollIntoViewIfNeeded"), intoView = method(E, "scrollIntoView");
      return ifNeeded ? (el) => uncurry(ifNeeded.value)(el, true) : (el) => intoView(el, { block: "center" });
    })(),
    box, style, lineBoxes, charBoxes,
    openShadowRoot: openRoot, rootNode: (node) => rootNode(node), parentNode, host: hostOf, isShadowRoot,
    assignedSlot: (node) => (nodeType(node) === 3 ? textSlot(node) : elementSlot(node)),
    assignedNodes: (slot) => assigned(slot, { flatten: true }),
    setAttr: setAttribute, removeAttr: removeAttribute,
    // Adopt `sheet` into `root` (a document or shadow root), or drop it again.
    adopt: (root, sheet) => { const a = adoptedOf(root); if (a) a[1](root, [...a[0](root), sheet]); return !!a; },
    unadopt: (root, sheet) => { const a = adoptedOf(root); if (a) a[1](root, a[0](root).filter((s) => s !== sheet)); },
    sheet: (text) => { const s = new SheetCtor(); replaceSync(s, text); return s; },
    isSvg: (el) => isA(S, el), isHtml: (el) => isA(H, el),
    tabIndex: (el) => (isA(H, el) ? htmlTabIndex(el) : isA(S, el) ? svgTabIndex(el) : -1),
    // HTMLElement's own getters throw "Illegal invocation" on an SVG or MathML element: ask first.
    isContentEditable: (el) => isA(H, el) && htmlContentEditable(el),
    inlineStyle: (el) => (isA(H, el) ? htmlStyle(el) : isA(S, el) ? svgStyle(el) : undefined),
    setStyle: method(proto("CSSStyleDeclaration"), "setProperty"),
    focus: (el, options) => (isA(H, el) ? htmlFocus(el, options) : isA(S, el) ? svgFocus(el, options) : undefined),
    blur: (el) => (isA(H, el) ? htmlBlur(el) : isA(S, el) ? svgBlur(el) : undefined),
    prop: (el, name) => { const entry = entryFor(el, name); return entry ? entry[1](el) : undefined; },
    setProp: (el, name, value) => { const entry = entryFor(el, name); if (entry) entry[2](el, value); },

    // Events, observers, tasks.
    dispatch: (target, type) => dispatchEvent(target, new EventCtor(type, { bubbles: true })),
    listen: addListener,
    observer: (callback) => new Observer(callback),
    observe, takeRecords,
    // Resolves after the page's task queue has run once past this point.
    nextTask: () => new PromiseCtor((resolve) => {
      const channel = new MessageChannelCtor();
      setOnMessage(channel.port1, () => resolve());
      postMessage(channel.port2, null);
    }),

    // Canvases (our own colour probe draws on one).
    getContext: method(proto("HTMLCanvasElement"), "getContext"),
    setWidth: setter(proto("HTMLCanvasElement"), "width"), setHeight: setter(proto("HTMLCanvasElement"), "height"),
    ctx2d: (() => {
      const C = proto("CanvasRenderingContext2D");
      const data = getter(proto("ImageData"), "data"), imageData = method(C, "getImageData");
      return freeze({
        setFill: setter(C, "fillStyle"), clearRect: method(C, "clearRect"), fillRect: method(C, "fillRect"),
        pixel: (ctx) => data(imageData(ctx, 0, 0, 1, 1)),
      });
    })(),

    // The context a canvas was given first ("2d", "webgl2"...), noted by the prelude's getContext.
    noteContext: (canvas, kind, context) => {
      if (contextHas(contexts, canvas)) return;
      contextSet(contexts, canvas, freeze({ kind: StringCtor(kind), context }));
      for (const [p] of glFinish) if (isA(p, context)) { webgl[webgl.length] = context; break; }
    },
    contextOf: (canvas) => contextGet(contexts, canvas),
    webglContexts: () => webgl.length,
    // Blocks until the GPU has drawn everything the page's WebGL contexts were given so far.
    finishDrawing: () => { for (const gl of webgl) finishDrawing(gl); return webgl.length; },

    state: { frames: 0, popups: 0 },
  });
}
