"""f_det and the potential ledger's matching: a DOM census of the served app, a pixel comparison
of the whole page with the reference's long screenshot, and the source-authoring score of a reproduction without requirements.

The census is the rendering's visible text (what the counterfactual found shown) and what one call
in our world reads from the live page: the shown matches of each requirement's selector, and its
shown in-page links (`href="#x"`) with whether each target exists.
A requirement scores the mean of the checks it sets (`ProjectRequirement`); f_det = Σ wᵢ·scoreᵢ.
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
from PIL import Image
from pydantic import BaseModel, Field

from aesenv.render.live import LivePage
from aesenv.tasks.project import ProjectRequirement, ProjectSpec

MAX_TEXT_CHARS = 200_000
# In our isolated world (`LivePage.evaluate`), through the one definition of what a person sees
# (`N.seen`, with the counterfactual's verdicts): shown in-page links, and the shown matches of each
# requirement's selector. The census's text is the rendering's visible text (shown by the
# counterfactual), not read here.
CENSUS_JS = """(requirements) => {
  const N = globalThis.__aesenv__, seen = N.seen({}), doc = N.document;
  const visible = (el) => seen.element(el).shown;
  // a link a person sees: its text is shown text, or a picture in it is shown
  const link = (a) => visible(a) && (seen.textIn(a, 200) !== "" || N.all(a, "img, svg, canvas").some(visible));
  const hrefs = N.all(doc, 'a[href^="#"]').filter(link).map((a) => N.attr(a, 'href') || '').filter((h) => h.length > 1);
  const exists = (h) => { try { return N.all(doc, '#' + N.escapeCss(decodeURIComponent(h.slice(1)))).length > 0; } catch (e) { return false; } };
  const broken = hrefs.filter((h) => !exists(h));
  const counts = {};
  for (const r of requirements) {
    if (!r.selector) continue;
    try { counts[r.id] = seen.deepAll(r.selector).filter(visible).length; } catch (e) { counts[r.id] = -1; }
  }
  return {links: hrefs.length, broken: [...new N.Set(broken)].slice(0, 20), broken_count: broken.length, counts};
}"""


class Census(BaseModel):
    """What the census read from one served page (all of it came from untrusted code: bounded)."""

    text: str = Field(default="", max_length=MAX_TEXT_CHARS)
    links: int = Field(default=0, ge=0)  # in-page links
    broken: list[str] = Field(default_factory=list, max_length=20)  # their targets that do not exist
    broken_count: int = Field(default=0, ge=0)
    counts: dict[str, int] = Field(default_factory=dict)  # requirement id -> visible selector matches (-1: bad selector)


async def take_census(live: LivePage, spec: ProjectSpec, text: str) -> Census:
    """The census of the open page; `text` is its rendering's visible text."""
    wanted = [{"id": r.id, "selector": r.selector} for r in spec.requirements if r.selector]
    # A match counts where taking it away changes the pixels (a section masked over a striped band
    # does not): measured first, then honoured by the census's reads.
    await live.confirm_shown([w["selector"] for w in wanted])
    raw = await live.evaluate(CENSUS_JS, wanted, timeout_s=5.0)
    raw = raw if isinstance(raw, dict) else {}
    counts = raw.get("counts") if isinstance(raw.get("counts"), dict) else {}
    return Census(text=text[:MAX_TEXT_CHARS], links=max(0, int(raw.get("links") or 0)),
                  broken=[str(b)[:200] for b in (raw.get("broken") or [])][:20],
                  broken_count=max(0, int(raw.get("broken_count") or 0)),
                  counts={str(k): int(v) for k, v in list(counts.items())[:200] if isinstance(v, (int, float))})


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).casefold().strip()


def requirement_checks(req: ProjectRequirement, census: Census, *, with_counts: bool = True) -> dict[str, Any]:
    """Each check `req` sets, scored in [0, 1], with what it found."""
    checks: dict[str, Any] = {}
    if req.keywords:
        text = _fold(census.text)
        found = [k for k in req.keywords if _fold(k) in text]
        checks["keywords"] = {"score": len(found) / len(req.keywords), "found": found,
                              "missing": [k for k in req.keywords if k not in found]}
    if req.links_resolve:
        share = (census.links - census.broken_count) / census.links if census.links else 0.0
        checks["links"] = {"score": share, "links": census.links, "broken": census.broken}
    if with_counts and req.counted:
        count = census.counts.get(req.id, 0)
        checks["count"] = {"score": min(1.0, max(0, count) / req.min_count), "count": count,
                           "wanted": req.min_count, **({"problem": "invalid selector"} if count < 0 else {})}
    return checks


def _mean(checks: dict[str, Any]) -> float | None:
    return round(sum(c["score"] for c in checks.values()) / len(checks), 6) if checks else None


def requirement_score(req: ProjectRequirement, census: Census, *, with_counts: bool = True) -> float | None:
    """The mean of `req`'s checks; None when it sets none (a count-only one without counts)."""
    return _mean(requirement_checks(req, census, with_counts=with_counts))


def f_det_generation(spec: ProjectSpec, census: Census) -> tuple[float, dict[str, Any]]:
    """Σ wᵢ·scoreᵢ over the requirements, hidden ones included, with each one's checks."""
    detail = {}
    for r in spec.requirements:
        checks = requirement_checks(r, census)
        detail[r.id] = {"weight": r.weight, "type": r.type, "score": _mean(checks), "checks": checks}
    return round(sum(d["weight"] * d["score"] for d in detail.values()), 6), detail


# --- reproduction -------------------------------------------------------------------------------

COMPARE_WIDTH = 160  # columns a page is compared at; its height follows in proportion (the whole page)


def _gray_page(png: bytes) -> np.ndarray:
    """The whole screenshot in grey at COMPARE_WIDTH columns, its length kept in proportion."""
    with Image.open(io.BytesIO(png)) as image:
        rows = max(2, round(image.height * COMPARE_WIDTH / max(1, image.width)))
        return np.asarray(image.convert("L").resize((COMPARE_WIDTH, rows), Image.BILINEAR), dtype=np.float64) / 255.0


def _extended(px: np.ndarray, rows: int) -> np.ndarray:
    """`px` run on to `rows` rows in its own last row's colour: a page that ends early shows its
    background below its end, which is what a longer page is compared with there."""
    if px.shape[0] >= rows:
        return px
    fill = np.full((rows - px.shape[0], px.shape[1]), float(np.median(px[-1])))
    return np.vstack([px, fill])


def _edges(px: np.ndarray) -> np.ndarray:
    return np.hypot(np.diff(px, axis=0)[:, :-1], np.diff(px, axis=1)[:-1, :])


def pixel_similarity(candidate: bytes, reference: bytes) -> dict[str, float]:
    """How close the candidate's whole page is to the reference's, both long screenshots (WebCoder
    judges long-screenshot replication), in [0, 1]: the mean of tone agreement (1 − mean absolute
    grey difference, scaled so a 25 % mean difference is 0) and layout agreement (the correlation
    of the two edge maps; a blank page has no edges and gets 0). Both are taken over the longer
    page, the shorter one run on in its background, so a section missing below the first screen,
    or one the reference does not have, costs what it covers."""
    a, b = _gray_page(candidate), _gray_page(reference)
    length = a.shape[0] / b.shape[0]  # the candidate's page length as a share of the reference's
    rows = max(a.shape[0], b.shape[0])
    a, b = _extended(a, rows), _extended(b, rows)
    tone = max(0.0, 1.0 - float(np.abs(a - b).mean()) / 0.25)
    ea, eb = _edges(a).ravel(), _edges(b).ravel()
    layout = 0.0 if ea.std() < 1e-9 or eb.std() < 1e-9 else max(0.0, float(np.corrcoef(ea, eb)[0, 1]))
    return {"tone": round(tone, 4), "layout": round(layout, 4), "score": round((tone + layout) / 2, 4),
            "length": round(length, 4)}


def text_overlap(candidate: str, reference: str) -> dict[str, float]:
    """Word recall of the reference's visible text in the candidate's, and their Jaccard overlap."""
    words = lambda text: set(re.findall(r"\w{2,}", text.casefold()))  # noqa: E731
    got, want = words(candidate), words(reference)
    recall = len(got & want) / len(want) if want else 0.0
    jaccard = len(got & want) / len(got | want) if got | want else 0.0
    return {"recall": round(recall, 4), "jaccard": round(jaccard, 4)}


# --- source authoring (Φ of a reproduction without requirements) -------------------------------

SOURCE_WEIGHTS = {"root_authored": 0.30, "source_lines": 0.20, "components": 0.20, "imports_used": 0.15,
                  "styling": 0.15}
_IMPORT = re.compile(r"""(?:import\s[^'"]*?from\s*|import\s*\(?\s*)['"](\.{1,2}/[^'"]+)['"]""")


def source_authoring(files: dict[str, bytes], scaffold: dict[str, bytes]) -> dict[str, Any]:
    """How far the sources moved from the scaffold, each part saturating: the root component no
    longer the placeholder, authored source lines (150), component files (3), authored local
    modules that something imports (3), and styling lines (60)."""
    def lines(path: str) -> list[str]:
        return [line for line in files[path].decode("utf-8", "replace").splitlines() if line.strip()]

    def new_lines(path: str) -> int:
        old = set(scaffold.get(path, b"").decode("utf-8", "replace").splitlines())
        return sum(line not in old for line in lines(path))

    sources = [p for p in files if p.startswith("src/") and p.endswith((".jsx", ".js", ".tsx", ".ts"))]
    styles = [p for p in files if p.endswith(".css")]
    components = [p for p in sources if p not in ("src/main.jsx", "src/App.jsx")]
    imported = set()
    for path in sources:
        for target in _IMPORT.findall(files[path].decode("utf-8", "replace")):
            imported.add(target.rsplit("/", 1)[-1].split(".")[0])
    authored = [p for p in components + styles if p not in scaffold]
    used = [p for p in authored if p.rsplit("/", 1)[-1].split(".")[0] in imported]
    parts = {"root_authored": float(files.get("src/App.jsx", b"") not in (b"", scaffold.get("src/App.jsx"))),
             "source_lines": min(1.0, sum(new_lines(p) for p in sources) / 150),
             "components": min(1.0, len(components) / 3),
             "imports_used": min(1.0, len(used) / 3),
             "styling": min(1.0, sum(new_lines(p) for p in styles) / 60)}
    return {"parts": {k: round(v, 4) for k, v in parts.items()},
            "score": round(sum(SOURCE_WEIGHTS[k] * v for k, v in parts.items()), 4)}
