// Reflow check at a phone width: does the page fit, and what sticks out? (Reads the page
// through the natives `N`, see natives.js.)
(N) => {
  const doc = N.document, body = N.body(doc), root = N.root(doc), vw = N.viewport().width;
  const docWidth = N.math.max(root ? N.scrollWidth(root) : 0, body ? N.scrollWidth(body) : 0);
  let overflowing = 0, tiny = 0, textEls = 0;
  const measured = !!N.store && N.store.nodes.length > 0;  // the counterfactual has judged this document's text
  for (const el of body ? N.all(body, "*") : []) {
    const r = N.box(el);
    if (r.width < 1 || r.height < 1) continue;
    const css = N.style(el);
    if (css("display") === "none" || css("visibility") === "hidden") continue;
    if (css("position") !== "fixed" && r.right > vw + 2) overflowing++;
    // own text a person sees: where the counterfactual measured it at the judging width, only
    // what it found shown (hidden copy would dilute the share of tiny or overflowing text)
    const hasText = N.childNodes(el).some((c) => N.nodeType(c) === 3 && N.text(c).trim()
      && (!measured || (N.store.textVerdict(c) || []).length > 0));
    if (hasText) { textEls++; if (N.parseFloat(css("font-size")) < 11) tiny++; }
  }
  return { width: vw, doc_width: docWidth, overflowing_elements: overflowing, text_elements: textEls, tiny_text_elements: tiny };
}
