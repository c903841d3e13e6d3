// Stop motion before capture, so the screenshot is the same on every render: finite
// animations jump to their end state, endless ones go back to their start, transitions and
// the text caret are switched off. (The page's JavaScript clock is already frozen.) Reads and
// changes the page through the natives `N` (see natives.js).
(N) => {
  const doc = N.document;
  const style = N.createElement(doc, "style");
  N.setText(style, "*, *::before, *::after { transition: none !important; caret-color: transparent !important; }");
  const parent = N.head(doc) || N.root(doc);  // none when the page removed its document element
  if (parent) N.append(parent, style);
  for (const animation of N.animations(doc) || []) {
    try {
      const timing = N.effectTiming(animation);
      if (timing && N.isFinite(timing.endTime)) N.finish(animation);
      else N.cancel(animation);
    } catch (e) { /* an animation that refuses to finish keeps its current frame */ }
  }
  return true;
}
