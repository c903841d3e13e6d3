// Stop motion before capture, so the screenshot is the same on every render: finite
// animations jump to their end state, endless ones go back to their start, transitions and
// the text caret are switched off. (The page's JavaScript clock is already frozen.)
() => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { transition: none !important; caret-color: transparent !important; }";
  (document.head || document.documentElement).appendChild(style);
  for (const animation of document.getAnimations ? document.getAnimations() : []) {
    try {
      const timing = animation.effect ? animation.effect.getComputedTiming() : null;
      if (timing && Number.isFinite(timing.endTime)) animation.finish();
      else animation.cancel();
    } catch (e) { /* an animation that refuses to finish keeps its current frame */ }
  }
  return true;
}
