// Reflow check at a phone width: does the page fit, and what sticks out?
() => {
  const vw = window.innerWidth, de = document.documentElement;
  const docWidth = Math.max(de.scrollWidth, document.body ? document.body.scrollWidth : 0);
  let overflowing = 0, tiny = 0, textEls = 0;
  for (const el of document.body ? document.body.querySelectorAll("*") : []) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden") continue;
    if (cs.position !== "fixed" && r.right > vw + 2) overflowing++;
    const hasText = [...el.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (hasText) { textEls++; if (parseFloat(cs.fontSize) < 11) tiny++; }
  }
  return { width: vw, doc_width: docWidth, overflowing_elements: overflowing, text_elements: textEls, tiny_text_elements: tiny };
}
