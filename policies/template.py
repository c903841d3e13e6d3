"""The template policy: an honest, deterministic, offline baseline.

It composes a real single-file page from the prompt with a small component library, so the
whole pipeline (render, lint, judge, interact) can run without a model, and so trained
policies have a floor to beat. It is deliberately generic: every prompt in a category gets
the same layout and the same mechanics, only the words, numbers and accent colour change.
"""

from __future__ import annotations

import hashlib
import html
import random
import re
from dataclasses import dataclass, field

from aesenv.colour import contrast_ratio_scalar, luminance_scalar
from aesenv.tasks import Category, Task
from policies.base import register_policy

# --------------------------------------------------------------------------------------------
# Reading the prompt
# --------------------------------------------------------------------------------------------

STOPWORDS = frozenset("""
a about above across after again against all also am an and any are around as at be been before
being below between both but by can could did do does doing down during each even every few for
from further had has have having he her here hers him his how i if in into is it its itself just
let lets like me more most much must my need needs no nor not now of off on once one only or other
our ours out over own please same she should show shows so some such than that the their theirs
them then there these they this those through to too two three under until up us very want was
we were what when where which while who whom why will with within would you your yours build
create make design render visualize include includes including using use used able get gets
each new make makes made way well really called named titled
""".split())

# Words that describe the deliverable rather than its content: never a title on their own.
GENERIC = frozenset("""
page pages landing homepage home website site web one-page single-page component components
app application section sections interface widget
""".split())

# Adjectives that read badly at the start of a title ("Classic Snake Game" -> "Snake Game").
TITLE_SKIP = frozenset("""
rotating interactive simple classic accessible modern beautiful responsive basic small clean
minimal elegant nice cool fun animated
""".split())

CHART_WORDS = frozenset("line bar bars chart charts donut pie graph stacked comparing showing".split())

# Tokens stripped from the front of a clause so "Show a menu of breads" becomes "menu of breads".
LEAD_FILLER = frozenset("""
i we need want would like please build create make design render visualize it should include
includes including show shows showing list lists let lets me us also add a an the our my your and
with that there be must can to introduce explain display displays has have for of then
""".split())

_ALPHA = re.compile(r"[a-z]+")


def key_terms(prompt: str) -> list[str]:
    """Content words of the prompt (>= 4 letters, no stopwords), in first-seen order."""
    seen: list[str] = []
    for word in _ALPHA.findall(prompt.lower()):
        if len(word) >= 4 and word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def _clean(token: str) -> str:
    return token.strip(".,;:!?()\"'’“”")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _title_case(words: list[str]) -> str:
    out = []
    for w in words:
        parts = w.split("-")
        out.append("-".join(p[:1].upper() + p[1:] for p in parts))
    return " ".join(out)


def find_title(prompt: str) -> str:
    """A quoted name, a name after called/named/titled, else the first run of content words."""
    quoted = re.search(r"[\"“]([^\"”]{2,48})[\"”]", prompt)
    if quoted:
        return quoted.group(1).strip()
    tokens = prompt.split()
    for i, tok in enumerate(tokens):
        if tok.lower() in {"called", "named", "titled"} and i + 1 < len(tokens):
            name: list[str] = []
            for nxt in tokens[i + 1:]:
                bare = _clean(nxt)
                if not bare:
                    break
                if bare[0].isupper() or bare[0].isdigit() or (name and bare in {"&", "of", "and", "the"}):
                    name.append(nxt)
                    if nxt.endswith((",", ";", ":", "!", "?", ".")):
                        break
                else:
                    break
            while name and _clean(name[-1]) in {"&", "of", "and", "the"}:
                name.pop()
            if name:
                text = " ".join(name).rstrip(",;:!?")
                if text.endswith(".") and len(name[-1]) > 4:
                    text = text[:-1]
                return text
    runs: list[list[str]] = [[]]
    for tok in tokens:
        bare = _clean(tok)
        low = bare.lower()
        if not bare or low in STOPWORDS or low in {"called", "named"}:
            runs.append([])
            continue
        runs[-1].append(bare)
        if tok != bare and tok[-1] in ".,;:!?":
            runs.append([])
    for run in runs:
        while run and (run[0].lower() in GENERIC | TITLE_SKIP | CHART_WORDS):
            run.pop(0)
        run = run[:4]
        while run and run[-1].lower() in GENERIC | CHART_WORDS:
            run.pop()
        if run:
            return _title_case(run)
    return "Untitled Project"


def find_phrases(prompt: str) -> list[str]:
    """Split the brief into short noun phrases ("menu of breads", "opening hours", ...)."""
    text = re.sub(r"\(([^)]*)\)", r", \1,", prompt)
    text = re.sub(r"\b(Co|Inc|Ltd|St|Dr|Mr|Ms|Mrs)\.(?=\s+[a-z])", r"\1<dot>", text)
    pieces = re.split(r"[.;:!?]\s+|[.;:!?]$|,|\band\b|\bwith\b|\bwhile\b|\bwhere\b|/", text)
    phrases: list[str] = []
    for piece in pieces:
        words = piece.replace("<dot>", ".").split()
        while words and _clean(words[0]).lower() in LEAD_FILLER:
            words.pop(0)
        while words and _clean(words[-1]).lower() in LEAD_FILLER:
            words.pop()
        phrase = " ".join(words).strip(" .,;:-")
        if phrase and key_terms(phrase) and phrase.lower() not in (p.lower() for p in phrases):
            phrases.append(phrase)
    return phrases


def short_title(phrase: str, limit: int = 4) -> str:
    """A card heading from a phrase: cut at the first preposition, at most `limit` words."""
    words = phrase.split()
    for i, w in enumerate(words):
        if i and w.lower() in {"for", "of", "in", "at", "on", "that", "which", "from", "to", "by", "as", "like",
                               "such", "over", "toward", "towards", "against", "into", "when", "while", "after",
                               "before", "until", "using", "via"}:
            if i >= 1:
                words = words[:i]
            break
    return _cap(" ".join(words[:limit]))


def proper_nouns(prompt: str, exclude: str) -> list[str]:
    """Capitalised words that do not start a sentence (city names, tab labels, ...)."""
    found: list[str] = []
    for m in re.finditer(r"\b([A-Z][a-z]{2,})\b", prompt):
        word, before = m.group(1), prompt[:m.start(1)].rstrip()
        if not before or before[-1] in ".!?:":
            continue
        if word.lower() in exclude.lower() or word.lower() in STOPWORDS or word in found:
            continue
        found.append(word)
    return found


def has(prompt: str, *words: str) -> bool:
    low = prompt.lower()
    return any(re.search(r"\b" + re.escape(w), low) for w in words)


# --------------------------------------------------------------------------------------------
# Colour
# --------------------------------------------------------------------------------------------

# Accents that all keep white text >= 4.5:1 on them (and themselves >= 4.5:1 on white).
ACCENTS: tuple[tuple[str, str], ...] = (
    ("indigo", "#4f46e5"),
    ("teal", "#0f766e"),
    ("rose", "#be123c"),
    ("blue", "#1d4ed8"),
    ("violet", "#6d28d9"),
    ("emerald", "#047857"),
    ("orange", "#c2410c"),
    ("sky", "#0369a1"),
    ("fuchsia", "#a21caf"),
    ("amber", "#b45309"),
)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{max(0, min(255, round(c))):02x}" for c in rgb)


def mix(a: str, b: str, t: float) -> str:
    """`a` moved a fraction `t` of the way toward `b`."""
    ra, rb = _rgb(a), _rgb(b)
    return _hex(tuple(x + (y - x) * t for x, y in zip(ra, rb)))


def luminance(hex_colour: str) -> float:
    return luminance_scalar(*_rgb(hex_colour))


def contrast(a: str, b: str) -> float:
    return contrast_ratio_scalar(luminance(a), luminance(b))


# --------------------------------------------------------------------------------------------
# The brief, digested once
# --------------------------------------------------------------------------------------------


@dataclass
class Brief:
    prompt: str
    category: Category
    title: str
    terms: list[str]
    phrases: list[str]
    accent: str
    rng: random.Random
    _ids: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_task(cls, task: Task) -> "Brief":
        digest = hashlib.sha256(f"{task.category.value}\n{task.prompt}".encode()).digest()
        seed = int.from_bytes(digest[:8], "big")
        return cls(prompt=task.prompt, category=task.category, title=find_title(task.prompt),
                   terms=key_terms(task.prompt), phrases=find_phrases(task.prompt),
                   accent=ACCENTS[seed % len(ACCENTS)][1], rng=random.Random(seed))

    def uid(self, base: str) -> str:
        """A unique, valid id attribute for this page."""
        slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-") or "item"
        n = self._ids.get(slug, 0)
        self._ids[slug] = n + 1
        return slug if n == 0 else f"{slug}-{n + 1}"

    @property
    def subject(self) -> str:
        """What the page is about, without the deliverable ("a neighborhood bakery")."""
        first = self.phrases[0] if self.phrases else self.title
        first = re.sub(r"\b(called|named|titled)\b.*$", "", first).strip()
        m = re.search(r"\b(?:for|of|about)\s+(.*)$", first)
        if m and any(w.lower() in GENERIC for w in first.split()[:3]):
            first = m.group(1)
        first = re.sub(r"^(an?|the|my|our)\s+", "", first, flags=re.I)
        return first or self.title

    def features(self, n: int) -> list[str]:
        """Up to n phrases after the subject, padded with key terms that are not filler."""
        items = list(self.phrases[1:]) or list(self.phrases)
        skip = GENERIC | TITLE_SKIP | CHART_WORDS
        for term in self.terms:
            if len(items) >= n:
                break
            if term not in skip and not any(term in p.lower() for p in items) and term not in self.title.lower():
                items.append(term)
        return items[:n]

    def extra_terms(self, used: str) -> list[str]:
        """Key terms that the page has not shown yet (so lists can pick them up)."""
        low = used.lower()
        return [t for t in self.terms if t not in low and t not in GENERIC | TITLE_SKIP]


def fill_slots(template: str, **values: str) -> str:
    """Fill {{name}} slots in a CSS/JS template (braces and % stay literal everywhere else)."""
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


def e(text: str) -> str:
    """Escape prompt-derived text; backticks too, so a ``` in a prompt cannot end the answer's fence."""
    return html.escape(text, quote=True).replace("`", "&#96;")


# --------------------------------------------------------------------------------------------
# Components
# --------------------------------------------------------------------------------------------

ICONS = (
    '<path d="M5 12l4 4L19 6" />',
    '<circle cx="12" cy="12" r="8" /><path d="M12 8v4l3 2" />',
    '<path d="M12 3l2.6 5.6 6.1.7-4.5 4.2 1.2 6-5.4-3-5.4 3 1.2-6L3.3 9.3l6.1-.7z" />',
    '<rect x="4" y="4" width="16" height="16" rx="3" /><path d="M4 10h16M10 4v16" />',
    '<path d="M4 19V9M10 19V5M16 19v-7M22 19H2" />',
    '<path d="M12 21s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 11c0 5.6-7 10-7 10z" />',
    '<path d="M13 2L4 14h7l-1 8 9-12h-7z" />',
    '<circle cx="12" cy="9" r="3.5" /><path d="M5 20c1.4-3.5 4-5 7-5s5.6 1.5 7 5" />',
)


def icon(i: int) -> str:
    return ('<svg class="icon" viewbox="0 0 24 24" width="24" height="24" fill="none" stroke="currentColor" '
            f'stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">{ICONS[i % len(ICONS)]}</svg>')


def site_header(b: Brief, links: list[tuple[str, str]], cta: tuple[str, str] | None = None) -> str:
    items = "".join(f'<li><a href="#{href}">{e(label)}</a></li>' for label, href in links)
    button = f'<a class="btn btn-small" href="#{cta[1]}">{e(cta[0])}</a>' if cta else ""
    initial = e(b.title.strip()[:1].upper() or "A")
    return (f'<header class="site-header"><div class="container nav-row">'
            f'<a class="brand" href="#top"><span class="logo" aria-hidden="true">{initial}</span>{e(b.title)}</a>'
            f'<nav aria-label="Main"><ul class="nav-links">{items}</ul></nav>{button}</div></header>')


def section(sid: str, eyebrow: str, heading: str, intro: str, inner: str, alt: bool = False) -> str:
    cls = "section alt" if alt else "section"
    intro_html = f'<p class="section-intro">{e(intro)}</p>' if intro else ""
    return (f'<section class="{cls}" id="{sid}"><div class="container">'
            f'<p class="eyebrow">{e(eyebrow)}</p><h2>{e(heading)}</h2>{intro_html}{inner}</div></section>')


CARD_LINES = (
    "Everything about {p}, laid out so you can find it at a glance.",
    "A clear, friendly take on {p}, kept simple and up to date.",
    "We put care into {p}, so the details are always easy to follow.",
    "From first look to last detail: {p}, explained in plain words.",
    "Quick answers on {p}, without the clutter.",
    "All you need to know about {p}, in one tidy place.",
)


def cards(b: Brief, phrases: list[str]) -> str:
    out = []
    for i, p in enumerate(phrases):
        line = CARD_LINES[(i + b.rng.randrange(6)) % len(CARD_LINES)].format(p=e(p.lower() if not p[:2].isupper() else p))
        out.append(f'<article class="card"><span class="card-icon">{icon(i + len(b.title))}</span>'
                   f'<h3>{e(short_title(p))}</h3><p>{line}</p></article>')
    return f'<div class="grid cards">{"".join(out)}</div>'


def checklist(items: list[str]) -> str:
    lis = "".join(f'<li>{icon(0)}<span>{e(_cap(t))}</span></li>' for t in items)
    return f'<ul class="checklist">{lis}</ul>'


def stats(items: list[tuple[str, str]]) -> str:
    cells = "".join(f'<div class="stat"><strong>{e(v)}</strong><span>{e(label)}</span></div>' for v, label in items)
    return f'<div class="stats">{cells}</div>'


def contact_form(b: Brief, heading_phrase: str) -> str:
    fid = b.uid("contact-form")
    name_id, mail_id, msg_id = b.uid("field-name"), b.uid("field-email"), b.uid("field-message")
    note = b.uid("form-note")
    return (f'<form class="form" id="{fid}" novalidate="novalidate">'
            f'<div class="field"><label for="{name_id}">Your name</label>'
            f'<input id="{name_id}" name="name" type="text" autocomplete="name" placeholder="Alex Morgan" required="required" /></div>'
            f'<div class="field"><label for="{mail_id}">Email</label>'
            f'<input id="{mail_id}" name="email" type="email" autocomplete="email" placeholder="alex@example.com" required="required" /></div>'
            f'<div class="field field-wide"><label for="{msg_id}">Message</label>'
            f'<textarea id="{msg_id}" name="message" rows="4" placeholder="Tell us about {e(heading_phrase.lower())}"></textarea></div>'
            f'<div class="field-wide form-actions"><button class="btn" type="submit">Send request</button>'
            f'<p class="form-note" id="{note}" role="status" aria-live="polite">We reply within one business day.</p></div>'
            f'</form>')


FORM_JS = """
document.querySelectorAll("form.form").forEach(function (form) {
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var note = form.querySelector(".form-note");
    var bad = Array.prototype.filter.call(form.querySelectorAll("[required]"), function (f) {
      var ok = f.value.trim() !== "" && (f.type !== "email" || /.+@.+\\..+/.test(f.value));
      f.classList.toggle("invalid", !ok);
      return !ok;
    });
    note.textContent = bad.length ? "Please fill in the highlighted fields." : "Thanks! Your message is on its way.";
    note.classList.toggle("error", bad.length > 0);
    if (!bad.length) { form.reset(); }
  });
});
"""


def site_footer(b: Brief, links: list[tuple[str, str]]) -> str:
    items = "".join(f'<li><a href="#{href}">{e(label)}</a></li>' for label, href in links)
    return (f'<footer class="site-footer"><div class="container footer-row">'
            f'<div><p class="brand brand-footer"><span class="logo" aria-hidden="true">{e(b.title[:1].upper())}</span>{e(b.title)}</p>'
            f'<p class="muted-light">{e(_cap(b.subject))}. Made with care.</p></div>'
            f'<ul class="footer-links">{items}</ul></div>'
            f'<div class="container"><p class="legal">&copy; {e(b.title)}. All rights reserved.</p></div></footer>')


def page_header(b: Brief, eyebrow: str, lead: str) -> str:
    """The compact title block used by the app-like categories."""
    return (f'<header class="app-header"><div class="container">'
            f'<p class="eyebrow">{e(eyebrow)}</p><h1>{e(b.title)}</h1>'
            f'<p class="lead">{e(lead)}</p></div></header>')


# --------------------------------------------------------------------------------------------
# Document shell and shared CSS
# --------------------------------------------------------------------------------------------

BASE_CSS = """
:root{--accent:{{accent}};--accent-ink:{{ink}};--accent-soft:{{soft}};--accent-line:{{line}};--ink:#111827;--text:#1f2937;--muted:#4b5563;--line:#e5e7eb;--bg:#ffffff;--surface:#f8fafc;--radius:16px;--shadow:0 1px 2px rgba(17,24,39,.06),0 8px 24px rgba(17,24,39,.06)}
*,*::before,*::after{box-sizing:border-box}
html{font-size:16px;scroll-behavior:smooth}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;font-size:1rem;line-height:1.6;color:var(--text);background:var(--bg);-webkit-font-smoothing:antialiased}
h1,h2,h3{color:var(--ink);line-height:1.2;letter-spacing:-.015em;margin:0 0 .5em;overflow-wrap:anywhere}
h1{font-size:clamp(2.1rem,4.6vw,3.4rem);font-weight:800}
h2{font-size:clamp(1.6rem,3vw,2.2rem);font-weight:750}
h3{font-size:1.15rem;font-weight:700}
p{margin:0 0 1rem}
a{color:var(--accent-ink)}
img,svg,canvas{max-width:100%}
.container{width:100%;max-width:1120px;margin:0 auto;padding:0 24px}
.eyebrow{display:inline-block;margin:0 0 .75rem;font-size:.8rem;font-weight:700;letter-spacing:.08em;text-transform:uppercase;color:var(--accent-ink)}
.lead{font-size:1.15rem;color:var(--muted);max-width:640px}
.btn{display:inline-flex;align-items:center;justify-content:center;gap:.5rem;min-height:44px;padding:.7rem 1.25rem;border:2px solid var(--accent);border-radius:999px;background:var(--accent);color:#fff;font:inherit;font-weight:650;text-decoration:none;cursor:pointer;transition:transform .15s ease,box-shadow .15s ease,background .15s ease}
.btn:hover{transform:translateY(-1px);box-shadow:0 6px 16px rgba(17,24,39,.15)}
.btn:focus-visible,a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid var(--accent-line);outline-offset:2px}
.btn-ghost{background:transparent;color:var(--accent-ink)}
.btn-small{min-height:38px;padding:.45rem 1rem;font-size:.95rem}
.site-header{position:sticky;top:0;z-index:20;background:rgba(255,255,255,.92);backdrop-filter:blur(8px);border-bottom:1px solid var(--line)}
.nav-row{display:flex;align-items:center;justify-content:space-between;gap:1.5rem;min-height:68px}
.brand{display:inline-flex;align-items:center;gap:.6rem;font-weight:800;font-size:1.1rem;color:var(--ink);text-decoration:none;margin:0}
.logo{display:inline-grid;place-items:center;width:34px;height:34px;border-radius:10px;background:var(--accent);color:#fff;font-weight:800}
.nav-links{display:flex;gap:1.5rem;list-style:none;margin:0;padding:0}
.nav-links a{color:var(--muted);text-decoration:none;font-weight:550}
.nav-links a:hover{color:var(--accent-ink)}
.section{padding:80px 0}
.section.alt{background:var(--surface);border-top:1px solid var(--line);border-bottom:1px solid var(--line)}
.section-intro{color:var(--muted);max-width:640px;margin-bottom:2.25rem}
.grid{display:grid;gap:24px}
.cards{grid-template-columns:repeat(auto-fit,minmax(280px,1fr))}
.card{background:#fff;border:1px solid var(--line);border-radius:var(--radius);padding:28px;box-shadow:var(--shadow)}
.card p{color:var(--muted);margin:0}
.card-icon{display:inline-grid;place-items:center;width:44px;height:44px;border-radius:12px;background:var(--accent-soft);color:var(--accent-ink);margin-bottom:1rem}
.checklist{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
.checklist li{display:flex;gap:.75rem;align-items:flex-start}
.checklist .icon{flex:none;color:var(--accent);width:22px;height:22px;margin-top:2px}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:16px}
.stat{padding:20px 24px;border-radius:var(--radius);background:#fff;border:1px solid var(--line)}
.stat strong{display:block;font-size:1.75rem;color:var(--ink);line-height:1.2}
.stat span{color:var(--muted);font-size:.95rem}
.form{display:grid;grid-template-columns:1fr 1fr;gap:18px;background:#fff;border:1px solid var(--line);border-radius:var(--radius);padding:28px;box-shadow:var(--shadow)}
.field{display:grid;gap:.4rem}
.field-wide{grid-column:1 / -1}
label{font-weight:600;color:var(--ink);font-size:.95rem}
input,textarea,select{width:100%;font:inherit;color:var(--text);background:#fff;border:1.5px solid #cbd5e1;border-radius:10px;padding:.65rem .8rem;min-height:44px}
input.invalid,textarea.invalid{border-color:#b91c1c;background:#fef2f2}
.form-actions{display:flex;flex-wrap:wrap;align-items:center;gap:1rem}
.form-note{margin:0;color:var(--muted);font-size:.95rem}
.form-note.error{color:#b91c1c}
.site-footer{background:#0f172a;color:#e2e8f0;padding:48px 0 24px}
.site-footer .brand{color:#fff}
.footer-row{display:flex;flex-wrap:wrap;justify-content:space-between;gap:24px}
.footer-links{display:flex;flex-wrap:wrap;gap:1.25rem;list-style:none;margin:0;padding:0}
.footer-links a{color:#e2e8f0;text-decoration:none}
.muted-light{color:#cbd5e1;margin-top:.75rem}
.legal{margin:28px 0 0;padding-top:18px;border-top:1px solid #1e293b;font-size:.9rem;color:#94a3b8}
.app-header{padding:56px 0 32px;background:linear-gradient(180deg,var(--accent-soft),#fff)}
.app-header .lead{margin-bottom:0}
.panel{background:#fff;border:1px solid var(--line);border-radius:var(--radius);padding:24px;box-shadow:var(--shadow)}
.panel h2{font-size:1.25rem}
kbd{display:inline-block;min-width:1.9em;padding:.1em .45em;border:1px solid #cbd5e1;border-bottom-width:3px;border-radius:6px;background:#fff;font:600 .85rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--ink);text-align:center}
.chips{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;margin:0;padding:0}
.chips li{padding:.3rem .75rem;border-radius:999px;background:var(--accent-soft);color:var(--accent-ink);font-size:.9rem;font-weight:600}
@media (max-width:720px){
  .section{padding:56px 0}
  .container{padding:0 18px}
  .nav-links{display:none}
  .form{grid-template-columns:1fr;padding:20px}
  .card{padding:22px}
  .app-header{padding:40px 0 24px}
}
"""


def document(b: Brief, body: str, css: str, script: str, description: str) -> str:
    palette = {"accent": b.accent, "ink": mix(b.accent, "#000000", 0.18), "soft": mix(b.accent, "#ffffff", 0.9),
               "line": mix(b.accent, "#ffffff", 0.55)}
    style = fill_slots(BASE_CSS, **palette) + css
    script_tag = f"<script>\n(function () {{\n\"use strict\";{script}}})();\n</script>\n" if script.strip() else ""
    return ("<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n'
            '<meta charset="utf-8" />\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
            f'<meta name="description" content="{e(description)}" />\n'
            f"<title>{e(b.title)}</title>\n"
            f"<style>{style}</style>\n"
            "</head>\n"
            f'<body id="top">\n{body}\n{script_tag}</body>\n</html>\n')


# --------------------------------------------------------------------------------------------
# Website
# --------------------------------------------------------------------------------------------

WEBSITE_CSS = """
.hero{padding:88px 0 72px;background:radial-gradient(1200px 500px at 85% -10%,var(--accent-soft),transparent 60%),#fff}
.hero-grid{display:grid;grid-template-columns:1.15fr .85fr;gap:56px;align-items:center}
.hero .actions{display:flex;flex-wrap:wrap;gap:12px;margin-top:1.75rem}
.hero-art{position:relative;aspect-ratio:4 / 3.4;border-radius:28px;background:linear-gradient(135deg,var(--accent) 0%,{{deep}} 100%);box-shadow:0 30px 60px -20px rgba(17,24,39,.35);overflow:hidden}
.hero-art svg{position:absolute;inset:0;width:100%;height:100%}
.hero-card{position:absolute;left:24px;right:24px;bottom:24px;background:rgba(255,255,255,.96);border-radius:18px;padding:18px 20px;box-shadow:0 12px 30px rgba(17,24,39,.2)}
.hero-card strong{display:block;color:var(--ink);margin-bottom:.5rem}
.split{display:grid;grid-template-columns:1fr 1fr;gap:56px;align-items:start}
.plans{grid-template-columns:repeat(auto-fit,minmax(240px,1fr))}
.plan{display:flex;flex-direction:column;gap:.75rem}
.plan .price{font-size:2.2rem;font-weight:800;color:var(--ink);margin:0}
.plan .price small{font-size:1rem;font-weight:500;color:var(--muted)}
.plan.featured{border:2px solid var(--accent);position:relative}
.badge{position:absolute;top:-13px;left:24px;background:var(--accent);color:#fff;font-size:.8rem;font-weight:700;padding:.2rem .7rem;border-radius:999px}
.plan .btn{margin-top:auto}
blockquote{margin:0;padding:28px;border-left:4px solid var(--accent);background:#fff;border-radius:0 var(--radius) var(--radius) 0;box-shadow:var(--shadow)}
blockquote p{font-size:1.15rem;color:var(--ink)}
blockquote cite{font-style:normal;color:var(--muted);font-size:.95rem}
@media (max-width:860px){.hero-grid,.split{grid-template-columns:1fr;gap:36px}.hero{padding:56px 0 48px}}
"""

PLAN_WORDS = ("plan", "pricing", "ticket", "tier", "membership", "subscription", "package")
FORM_WORDS = ("form", "booking", "book", "appointment", "signup", "sign-up", "newsletter", "order", "request",
              "contact", "reservation")


def hero_art(b: Brief, chips: list[str]) -> str:
    r = b.rng
    circles = "".join(
        f'<circle cx="{r.randint(40, 360)}" cy="{r.randint(30, 200)}" r="{r.randint(24, 90)}" fill="#ffffff" '
        f'fill-opacity="{r.choice(("0.08", "0.12", "0.16"))}" />' for _ in range(5))
    wave = '<path d="M0 230 C 90 190, 170 260, 260 220 S 380 200, 400 210 L 400 340 L 0 340 Z" fill="#ffffff" fill-opacity="0.1" />'
    chip_html = "".join(f"<li>{e(_cap(c))}</li>" for c in chips)
    return (f'<div class="hero-art" role="img" aria-label="Illustration for {e(b.title)}">'
            f'<svg viewbox="0 0 400 340" preserveaspectratio="xMidYMid slice" aria-hidden="true">{circles}{wave}</svg>'
            f'<div class="hero-card"><strong>{e(b.title)} at a glance</strong><ul class="chips">{chip_html}</ul></div></div>')


def website(b: Brief) -> tuple[str, str, str]:
    feats = b.features(8)
    stock = ["Thoughtful details", "Quick, friendly replies", "Simple from start to finish"]
    if 3 < len(feats) < 6:
        feats += stock[: 6 - len(feats)]
    elif len(feats) < 3:
        feats += stock[: 3 - len(feats)]
    n_cards = 6 if len(feats) >= 6 else 3
    card_items = feats[:n_cards]
    rest = feats[n_cards:]
    form_phrase = next((p for p in b.phrases[1:] if has(p, *FORM_WORDS)), "")
    want_plans = has(b.prompt, *PLAN_WORDS)
    links = [("Highlights", "features"), ("About", "about")]
    if want_plans:
        links.append(("Plans", "plans"))
    links.append(("Contact", "contact"))

    lead_items = ", ".join(short_title(p).lower() for p in card_items[:3])
    lead = f"{_cap(b.subject)}, all in one place. Explore {lead_items} and more."
    eyebrow = short_title(b.subject, 5)
    if eyebrow.lower() in b.title.lower() or b.title.lower() in eyebrow.lower():
        eyebrow = "Welcome"
    hero = (f'<section class="hero"><div class="container hero-grid"><div>'
            f'<p class="eyebrow">{e(eyebrow)}</p><h1>{e(b.title)}</h1>'
            f'<p class="lead">{e(lead)}</p>'
            f'<div class="actions"><a class="btn" href="#contact">Get started</a>'
            f'<a class="btn btn-ghost" href="#features">Learn more</a></div></div>'
            f'{hero_art(b, [short_title(p, 3) for p in card_items[:4]])}</div></section>')

    r = b.rng
    stat_row = stats([(f"{r.randint(2, 19)}+", "years of experience"),
                      (f"{r.randint(12, 95) * 100:,}", "happy customers"),
                      (f"4.{r.randint(6, 9)}/5", "average rating"),
                      (f"{r.randint(2, 9) * 12}h", "typical reply time")])
    features = section("features", "Highlights", f"What {b.title} offers",
                       f"A quick tour of what matters most: {', '.join(p.lower() for p in card_items[:3])}.",
                       cards(b, card_items))

    shown = " ".join([b.title, b.subject] + card_items)
    about_list = [_cap(p) for p in rest] + [_cap(t) for t in b.extra_terms(shown)][: max(0, 6 - len(rest))]
    if len(about_list) < 3:
        about_list += ["Friendly, personal service", "Clear information, no surprises", "Easy to reach when you need us"]
    article = "an" if b.subject[:1].lower() in "aeiou" else "a"
    about_text = (f"{b.title} is {article} {b.subject}. We keep things simple and honest, and we are "
                  f"happy to help with anything you need.")
    quote = (f'<blockquote><p>&ldquo;Exactly what we were looking for. {e(b.title)} made everything easy and '
             f'the details were spot on.&rdquo;</p><cite>&mdash; A happy customer</cite></blockquote>')
    about = section("about", "About", "Why people choose us", "",
                    f'<div class="split"><div><p>{e(about_text)}</p>{quote}</div>{checklist(about_list[:6])}</div>',
                    alt=True)

    plans_html = ""
    if want_plans:
        plan_word = next((w for w in ("ticket", "membership", "plan", "tier", "package") if has(b.prompt, w)), "plan")
        base = r.choice((9, 12, 19, 29, 49))
        tiers = [("Starter", base, ["Core features", "Email support"]),
                 ("Standard", base * 2 + 10, ["Everything in Starter", "Priority support", "Flexible changes"]),
                 ("Premium", base * 4 + 20, ["Everything in Standard", "Dedicated contact", "Exclusive extras"])]
        per = "/ person" if plan_word == "ticket" else "/ month"
        plan_cards = []
        for i, (tier, price, perks) in enumerate(tiers):
            featured = i == 1
            plan_cards.append(
                f'<article class="card plan{" featured" if featured else ""}">'
                + ('<span class="badge">Most popular</span>' if featured else "")
                + f'<h3>{tier} {e(plan_word)}</h3><p class="price">${price}<small> {per}</small></p>'
                + checklist(perks)
                + f'<a class="btn{"" if featured else " btn-ghost"}" href="#contact">Choose {tier}</a></article>')
        plans_html = section("plans", "Pricing", f"{_cap(plan_word)} options",
                             "Simple, transparent pricing. Pick what fits and change any time.",
                             f'<div class="grid plans">{"".join(plan_cards)}</div>')

    form_html = contact_form(b, form_phrase or b.subject)
    contact_heading = _cap(short_title(form_phrase, 5)) if form_phrase else "Get in touch"
    contact = section("contact", "Contact", contact_heading,
                      f"Send us a note about {form_phrase.lower() or b.subject} and we will get back to you shortly.",
                      form_html, alt=True)

    body = (site_header(b, links, ("Get started", "contact")) + "<main>" + hero
            + f'<div class="container stats-wrap">{stat_row}</div>'
            + features + about + plans_html + contact + "</main>" + site_footer(b, links))
    css = fill_slots(WEBSITE_CSS, deep=mix(b.accent, "#0f172a", 0.45)) + ".stats-wrap{margin-top:-8px;margin-bottom:8px}"
    return body, css, FORM_JS


# --------------------------------------------------------------------------------------------
# Data visualization
# --------------------------------------------------------------------------------------------

DATAVIZ_CSS = """
body{background:var(--surface)}
.app-header{background:linear-gradient(180deg,var(--accent-soft),var(--surface))}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:16px;margin:8px 0 24px}
.kpi{background:#fff;border:1px solid var(--line);border-radius:var(--radius);padding:18px 20px;box-shadow:var(--shadow)}
.kpi span{display:block;color:var(--muted);font-size:.9rem;font-weight:600}
.kpi strong{display:block;font-size:1.8rem;color:var(--ink);line-height:1.25;margin:.2rem 0}
.delta{font-size:.85rem;font-weight:700;font-style:normal;color:#047857}
.delta.down{color:#b91c1c}
.dash{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:24px;align-items:start}
.chart-head{display:flex;flex-wrap:wrap;justify-content:space-between;gap:12px;align-items:baseline}
.legend{display:flex;flex-wrap:wrap;gap:16px;list-style:none;margin:0;padding:0;font-size:.9rem;color:var(--muted)}
.legend li{display:flex;align-items:center;gap:.45rem}
.swatch{width:12px;height:12px;border-radius:3px;display:inline-block}
.chart{width:100%;height:auto;display:block;margin-top:8px}
.chart text{font-family:inherit;font-size:12px;fill:#4b5563}
.chart .axis-title{font-size:13px;font-weight:600;fill:#374151}
.chart .grid-line{stroke:#e5e7eb;stroke-width:1}
.chart .bar,.chart .dot{transition:opacity .15s ease}
.chart .bar:hover,.chart .dot:hover{opacity:.75}
.side-col{display:grid;gap:24px}
.side-col h2{font-size:1.1rem}
.bars-list{list-style:none;margin:0;padding:0;display:grid;gap:14px}
.bars-list .row{display:flex;justify-content:space-between;font-size:.95rem;margin-bottom:6px;gap:8px}
.meter{height:10px;border-radius:999px;background:#eef2f7;overflow:hidden}
.meter i{display:block;height:100%;border-radius:999px;background:var(--accent)}
.table-wrap{margin-top:24px}
table{width:100%;border-collapse:collapse;font-size:.95rem;table-layout:fixed}
th,td{padding:8px 12px;text-align:right;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
th:first-child,td:first-child{text-align:left}
thead th{color:var(--ink);font-weight:700;background:var(--surface)}
tbody th{color:var(--ink);font-weight:600}
.note{color:var(--muted);font-size:.9rem;margin:16px 0 0}
main{padding-bottom:56px}
@media (max-width:900px){.dash{grid-template-columns:1fr}}
@media (max-width:520px){table{font-size:.85rem}th,td{padding:8px 6px}.chart text{font-size:20px}.chart .axis-title{font-size:20px}
.kpi{padding:14px}.kpi strong{font-size:1.4rem}}
"""

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _nice_max(v: float) -> float:
    """The smallest 'round' axis top (5 ticks of 1, 2, 2.5 or 5 x 10^k) at or above v."""
    for mag in range(-2, 9):
        for step in (1, 2, 2.5, 5):
            top = step * 10 ** mag * 5
            if top >= v:
                return top
    return v


def _fmt(v: float) -> str:
    if v >= 1000:
        return f"{v / 1000:.1f}k".replace(".0k", "k")
    return f"{v:g}" if v == int(v) else f"{v:.1f}"


def chart_labels(b: Brief) -> tuple[list[str], str]:
    if has(b.prompt, "quarter"):
        return ["Q1", "Q2", "Q3", "Q4"], "Quarter"
    if has(b.prompt, "daily", "week", "day"):
        return DAYS, "Day"
    if has(b.prompt, "month", "year", "annual", "over time", "growth"):
        return MONTHS, "Month"
    paren = re.search(r"\(([^)]*)\)", b.prompt)
    if paren:
        items = [w.strip() for w in re.split(r",|\band\b", paren.group(1)) if w.strip()]
        if len(items) >= 3:
            return [_cap(w) for w in items[:7]], "Category"
    m = re.search(r"\bby\s+([a-z]+)", b.prompt.lower())
    terms = [t for t in b.terms if t not in CHART_WORDS][-6:]
    return [_cap(t) for t in terms] or ["A", "B", "C", "D"], _cap(m.group(1)) if m else "Category"


PERIOD_WORDS = frozenset("monthly daily weekly quarterly yearly annual".split())
TIME_WORDS = frozenset("""monthly daily weekly quarterly yearly annual past last total week weeks month months year
years twelve over time dashboard report""".split())


def chart_kind(b: Brief) -> str:
    """'line' or 'bar', whichever the prompt mentions first; trends default to a line."""
    low = b.prompt.lower()
    pos_line, pos_bar = low.find("line"), low.find("bar")
    if pos_line >= 0 and (pos_bar < 0 or pos_line < pos_bar):
        return "line"
    if pos_bar >= 0:
        return "bar"
    return "line" if has(b.prompt, "trend", "growth", "over time", "temperature") else "bar"


def chart_measure(b: Brief, kind: str) -> tuple[str, str]:
    """(the phrase that describes the chart, the quantity on its y axis)."""
    ranked = ([p for p in b.phrases if has(p, kind)] + [p for p in b.phrases if has(p, *CHART_WORDS)]
              + [p for p in b.phrases if any(w in PERIOD_WORDS for w in p.lower().split())])
    for phrase in ranked:
        m = re.search(r"\b(?:of|comparing|showing)\s+(?:the\s+)?(.+)$", phrase, re.I)
        text = m.group(1) if m else re.split(r"\s+as\s+", phrase)[0]
        words = [w for w in short_title(text, 4).split()
                 if w.lower() not in TIME_WORDS | GENERIC | CHART_WORDS | {"a", "an", "the"}]
        if words:
            return phrase, _cap(" ".join(words).lower())
    term = next((t for t in b.terms if t not in TIME_WORDS | GENERIC | CHART_WORDS), "value")
    return (ranked[0] if ranked else b.phrases[0] if b.phrases else b.title), _cap(term)


def chart_series(b: Brief, measure: str) -> list[str]:
    names = proper_nouns(b.prompt, b.title)
    if len(names) >= 2 and has(b.prompt, "compar", "versus", " vs"):
        return names[:3]
    if has(b.prompt, "last year", "previous year"):
        return ["This year", "Last year"]
    if has(b.prompt, "stacked"):
        m = re.search(r"\bby\s+([a-z]+)", b.prompt.lower())
        group = m.group(1) if m else "segment"
        if group == "plan":
            return ["Basic", "Pro", "Team"]
        return [f"{_cap(group)} A", f"{_cap(group)} B", f"{_cap(group)} C"]
    return [measure]


def series_colours(b: Brief, n: int) -> list[str]:
    partners = ["#f59e0b", "#0ea5e9", "#10b981", "#ef4444"]
    cols = [b.accent] + [c for c in partners if contrast(c, b.accent) > 1.4][: n - 1]
    return cols[:n]


def svg_chart(b: Brief, kind: str, labels: list[str], series: dict[str, list[float]], colours: list[str],
              x_title: str, y_title: str, stacked: bool) -> str:
    """An inline SVG bar/line chart with gridlines, ticks, axis titles and native tooltips."""
    W, H, L, R, T, B = 720, 360, 74, 20, 20, 56
    pw, ph = W - L - R, H - T - B
    names = list(series)
    if stacked:
        top = max(sum(series[s][i] for s in names) for i in range(len(labels)))
    else:
        top = max(max(v) for v in series.values())
    ymax = _nice_max(top * 1.08)
    parts = [f'<svg class="chart" viewbox="0 0 {W} {H}" role="img" aria-label="{e(y_title)} by {e(x_title.lower())}">',
             f"<title>{e(y_title)} by {e(x_title.lower())}</title>"]
    for k in range(6):
        v = ymax * k / 5
        y = T + ph - ph * k / 5
        parts.append(f'<line class="grid-line" x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" />')
        parts.append(f'<text x="{L - 10}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)}</text>')
    slot = pw / len(labels)
    for i, lab in enumerate(labels):
        cx = L + slot * (i + 0.5)
        parts.append(f'<text x="{cx:.1f}" y="{T + ph + 22}" text-anchor="middle">{e(lab[:max(3, int(slot / 7.5))])}</text>')
    parts.append(f'<line x1="{L}" y1="{T + ph}" x2="{W - R}" y2="{T + ph}" stroke="#9ca3af" stroke-width="1.5" />')
    if kind == "bar":
        group = slot * 0.7
        bw = group if stacked else group / len(names)
        for i, lab in enumerate(labels):
            base = 0.0
            for j, name in enumerate(names):
                v = series[name][i]
                h = ph * v / ymax
                x = L + slot * i + (slot - group) / 2 + (0 if stacked else j * bw)
                y = T + ph - h - (ph * base / ymax if stacked else 0)
                parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bw - (0 if stacked else 3):.1f}" '
                             f'height="{h:.1f}" rx="{0 if stacked else 4}" fill="{colours[j]}">'
                             f"<title>{e(name)}, {e(lab)}: {_fmt(v)}</title></rect>")
                if stacked:
                    base += v
    else:
        for j, name in enumerate(names):
            pts = [(L + slot * (i + 0.5), T + ph - ph * v / ymax) for i, v in enumerate(series[name])]
            d = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f} {y:.1f}" for i, (x, y) in enumerate(pts))
            if j == 0:
                area = d + f" L{pts[-1][0]:.1f} {T + ph} L{pts[0][0]:.1f} {T + ph} Z"
                parts.append(f'<path d="{area}" fill="{colours[0]}" fill-opacity="0.08" />')
            parts.append(f'<path d="{d}" fill="none" stroke="{colours[j]}" stroke-width="3" stroke-linejoin="round" '
                         f'stroke-linecap="round" />')
            for i, (x, y) in enumerate(pts):
                parts.append(f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#fff" stroke="{colours[j]}" '
                             f'stroke-width="2.5"><title>{e(name)}, {e(labels[i])}: {_fmt(series[name][i])}</title></circle>')
    parts.append(f'<text class="axis-title" x="{L + pw / 2:.1f}" y="{H - 8}" text-anchor="middle">{e(x_title)}</text>')
    parts.append(f'<text class="axis-title" transform="translate(18 {T + ph / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{e(y_title)}</text>')
    parts.append("</svg>")
    return "".join(parts)


KPI_HINTS = ("kpi", "total", "average", "rate", "count", "goal", "progress", "value", "growth", "churn")


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


def data_visualization(b: Brief) -> tuple[str, str, str]:
    r = b.rng
    labels, x_title = chart_labels(b)
    kind = chart_kind(b)
    chart_phrase, measure = chart_measure(b, kind)
    names = chart_series(b, measure)
    stacked = kind == "bar" and has(b.prompt, "stacked")
    scale = r.choice((40, 120, 800, 2400, 12000))
    series: dict[str, list[float]] = {}
    for j, name in enumerate(names):
        level = scale * r.uniform(0.45, 0.8) * (0.8 ** j)
        trend = r.uniform(-0.02, 0.08)
        vals = []
        for i in range(len(labels)):
            v = level * (1 + trend * i + r.uniform(-0.18, 0.18))
            vals.append(round(max(v, scale * 0.05), 1 if scale < 100 else 0))
        series[name] = vals
    colours = series_colours(b, len(names))
    chart = svg_chart(b, kind, labels, series, colours, x_title, measure, stacked)
    legend = "".join(f'<li><span class="swatch" style="background:{c}"></span>{e(n)}</li>'
                     for n, c in zip(names, colours))

    # Key figures: what the prompt asks for first, then honest summaries of the chart's numbers.
    first = series[names[0]]
    if stacked:
        first = [round(sum(series[n][i] for n in names), 1) for i in range(len(labels))]
    kpis: list[tuple[str, str]] = []
    for p in b.phrases:
        if p == chart_phrase or not has(p, *KPI_HINTS) or has(p, "chart", "table", "legend"):
            continue
        label = re.sub(r"^kpi\s+(cards?\s+)?(for\s+)?", "", p, flags=re.I)
        m = re.search(r"\b(?:showing|of)\s+(?:the\s+)?(.+)$", label, re.I)
        label = m.group(1) if m else label
        label = _cap(short_title(label, 5))
        if has(label, "heart", "pulse"):
            value = f"{r.randint(58, 92)} bpm"
        elif has(label, "rate", "progress", "goal", "percent", "share", "growth", "churn"):
            value = f"{r.uniform(2, 68):.1f}%"
        elif has(label, "value", "revenue", "price"):
            value = f"${r.randint(18, 240)}.{r.randint(10, 99)}"
        else:
            value = f"{r.randint(120, 9800):,}"
        kpis.append((label, value))
    unit = x_title.lower()
    for name in names[:2]:
        kpis.append((f"Average {name.lower()}" if len(names) == 1 else f"{name} average",
                     _fmt(round(sum(series[name]) / len(labels), 1))))
    kpis.append((f"Best {unit}", labels[first.index(max(first))]))
    if unit in {"month", "quarter", "day"}:
        change = (first[-1] - first[0]) / first[0] * 100 if first[0] else 0.0
        kpis.append((f"{labels[0]}\u2013{labels[-1]} change", f"{change:+.1f}%"))
    kpis.append((f"Total {measure.lower()}", _fmt(round(sum(first), 1))))
    kpi_html = []
    for label, value in kpis[:4]:
        delta = r.uniform(-6, 14)
        kpi_html.append(f'<div class="kpi"><span>{e(label)}</span><strong>{e(value)}</strong>'
                        f'<em class="delta{" down" if delta < 0 else ""}">{"&#9650;" if delta >= 0 else "&#9660;"} '
                        f'{abs(delta):.1f}% vs last period</em></div>')

    # Breakdown: the largest slots of the first series, as shares of its total.
    total = sum(first) or 1
    top = sorted(range(len(labels)), key=lambda i: -first[i])[:4]
    meters = "".join(
        f'<li><div class="row"><span>{e(labels[i])}</span><strong>{first[i] / total * 100:.0f}%</strong></div>'
        f'<div class="meter"><i style="width:{first[i] / first[top[0]] * 100:.0f}%"></i></div></li>' for i in top)
    shown = " ".join([b.title, b.subject, chart_phrase, measure] + [k for k, _ in kpis[:4]] + names + labels).lower()
    notes = [_cap(p) for p in b.features(8) if p.lower() not in shown][:5]
    notes += [_cap(t) for t in b.extra_terms(shown + " ".join(notes).lower())][: max(0, 6 - len(notes))]

    head = "".join(f'<th scope="col">{e(n)}</th>' for n in names)
    rows = "".join(f'<tr><th scope="row">{e(lab)}</th>' + "".join(f"<td>{series[n][i]:,.{1 if scale < 100 else 0}f}</td>" for n in names)
                   + "</tr>" for i, lab in enumerate(labels))
    table = (f'<div class="table-wrap"><table><caption class="note">Data behind the chart (sample values)</caption>'
             f'<thead><tr><th scope="col">{e(x_title)}</th>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
    aside = (f'<aside class="side-col"><section class="panel"><h2>Top {e(_plural(unit))} by {e(measure.lower())}</h2>'
             f'<p class="note">Share of the total for {e("all series" if stacked else names[0])} ({_fmt(total)}).</p>'
             f'<ul class="bars-list">{meters}</ul></section>'
             + (f'<section class="panel"><h2>In this report</h2>{checklist(notes)}</section>' if notes else "")
             + '<section class="panel"><h2>Reading the chart</h2><p class="note">Hover a bar or point to see its '
               'exact value. All figures are sample data.</p></section></aside>')
    lead = (f"{_cap(b.phrases[0] if b.phrases else b.subject)}. A quick overview of the key figures, "
            "with the data behind every chart.")
    body = (page_header(b, "Dashboard", lead)
            + '<main><div class="container">'
            + f'<section class="kpis" aria-label="Key figures">{"".join(kpi_html)}</section>'
            + '<div class="dash">'
            + f'<section class="panel"><div class="chart-head"><h2>{e(_cap(chart_phrase))}</h2>'
              f'<ul class="legend">{legend}</ul></div>{chart}{table}</section>'
            + aside + "</div></div></main>")
    return body, DATAVIZ_CSS, ""


# --------------------------------------------------------------------------------------------
# Game dev
# --------------------------------------------------------------------------------------------

GAME_CSS = """
body{background:#0b1020;color:#e5e7eb}
.app-header{background:radial-gradient(900px 300px at 20% 0%,{{glow}},transparent 70%),#0b1020}
.app-header h1{color:#fff}
.app-header .lead{color:#cbd5e1}
.app-header .eyebrow{color:{{light}}}
.game{display:grid;grid-template-columns:minmax(0,1fr) 300px;gap:24px;align-items:start;padding-bottom:56px}
.stage{background:#111833;border:1px solid #243056;border-radius:20px;padding:14px;box-shadow:0 20px 50px rgba(0,0,0,.35)}
canvas{display:block;width:100%;height:auto;border-radius:12px;background:#0e1430;touch-action:none}
.side{display:grid;gap:16px}
.side .panel{background:#111833;border-color:#243056;color:#e5e7eb;box-shadow:none}
.side h2{color:#fff;font-size:1.1rem}
.scores{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.score{background:#0b1020;border-radius:12px;padding:12px 14px}
.score span{display:block;font-size:.8rem;color:#a5b4cf;text-transform:uppercase;letter-spacing:.06em}
.score strong{font-size:1.6rem;color:#fff}
.side .btn{width:100%;margin-top:14px}
.how{margin:0;padding-left:1.1rem;color:#cbd5e1}
.how li{margin:.35rem 0}
.keys{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;color:#cbd5e1;margin:0}
.side .checklist{margin-bottom:14px;color:#e2e8f0}
.side .checklist .icon{color:{{light}}}
.side .chips li{background:#1e293b;color:#e2e8f0}
@media (max-width:900px){.game{grid-template-columns:1fr}}
"""

GAME_JS = """
var canvas = document.getElementById("game-canvas");
var ctx = canvas.getContext("2d");
var scoreEl = document.getElementById("score");
var bestEl = document.getElementById("best");
var startBtn = document.getElementById("start-btn");
var W = canvas.width, H = canvas.height;
var ACCENT = "{{accent}}", LIGHT = "{{light}}";
var keys = {};
var state = "ready", score = 0, best = 0, player, coins, hazards, lastTime = 0, elapsed = 0;

function rand(min, max) { return min + Math.random() * (max - min); }
function spawnCoin() { return { x: rand(30, W - 30), y: rand(30, H - 30), r: 9, t: rand(0, 6) }; }
function spawnHazard() {
  var a = rand(0, Math.PI * 2), s = rand(90, 150) + elapsed * 3;
  return { x: rand(40, W - 40), y: rand(20, 80), vx: Math.cos(a) * s, vy: Math.abs(Math.sin(a)) * s + 40, size: rand(18, 28) };
}
function reset() {
  player = { x: W / 2, y: H - 70, size: 26, speed: 300 };
  coins = [spawnCoin(), spawnCoin(), spawnCoin()];
  hazards = [spawnHazard(), spawnHazard()];
  score = 0; elapsed = 0;
  scoreEl.textContent = "0";
}
function start() {
  reset();
  state = "playing";
  startBtn.textContent = "Restart";
  canvas.focus();
}
function hit(ax, ay, as, bx, by, br) {
  var cx = Math.max(ax - as / 2, Math.min(bx, ax + as / 2));
  var cy = Math.max(ay - as / 2, Math.min(by, ay + as / 2));
  return (bx - cx) * (bx - cx) + (by - cy) * (by - cy) < br * br;
}
function update(dt) {
  elapsed += dt;
  var dx = (keys.ArrowRight ? 1 : 0) - (keys.ArrowLeft ? 1 : 0);
  var dy = (keys.ArrowDown ? 1 : 0) - (keys.ArrowUp ? 1 : 0);
  player.x = Math.max(player.size / 2, Math.min(W - player.size / 2, player.x + dx * player.speed * dt));
  player.y = Math.max(player.size / 2, Math.min(H - player.size / 2, player.y + dy * player.speed * dt));
  coins.forEach(function (c, i) {
    c.t += dt * 4;
    if (hit(player.x, player.y, player.size, c.x, c.y, c.r)) {
      score += 10;
      scoreEl.textContent = String(score);
      coins[i] = spawnCoin();
      if (score % 50 === 0) { hazards.push(spawnHazard()); }
    }
  });
  hazards.forEach(function (h) {
    h.x += h.vx * dt; h.y += h.vy * dt;
    if (h.x < h.size / 2 || h.x > W - h.size / 2) { h.vx *= -1; h.x = Math.max(h.size / 2, Math.min(W - h.size / 2, h.x)); }
    if (h.y < h.size / 2 || h.y > H - h.size / 2) { h.vy *= -1; h.y = Math.max(h.size / 2, Math.min(H - h.size / 2, h.y)); }
    if (hit(player.x, player.y, player.size * 0.8, h.x, h.y, h.size / 2)) { gameOver(); }
  });
}
function gameOver() {
  state = "over";
  if (score > best) { best = score; bestEl.textContent = String(best); }
}
function drawBackground() {
  ctx.fillStyle = "#0e1430";
  ctx.fillRect(0, 0, W, H);
  ctx.strokeStyle = "rgba(255,255,255,0.05)";
  ctx.lineWidth = 1;
  for (var x = 0; x <= W; x += 40) { ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, H); ctx.stroke(); }
  for (var y = 0; y <= H; y += 40) { ctx.beginPath(); ctx.moveTo(0, y); ctx.lineTo(W, y); ctx.stroke(); }
}
function draw() {
  drawBackground();
  coins.forEach(function (c) {
    var r = c.r + Math.sin(c.t) * 1.5;
    ctx.fillStyle = "#fbbf24";
    ctx.beginPath(); ctx.arc(c.x, c.y, r, 0, Math.PI * 2); ctx.fill();
    ctx.fillStyle = "#fde68a";
    ctx.beginPath(); ctx.arc(c.x - 3, c.y - 3, r / 3, 0, Math.PI * 2); ctx.fill();
  });
  hazards.forEach(function (h) {
    ctx.fillStyle = "#f43f5e";
    ctx.save(); ctx.translate(h.x, h.y); ctx.rotate(elapsed * 2);
    ctx.fillRect(-h.size / 2, -h.size / 2, h.size, h.size);
    ctx.restore();
  });
  ctx.fillStyle = LIGHT;
  ctx.shadowColor = LIGHT; ctx.shadowBlur = 16;
  ctx.fillRect(player.x - player.size / 2, player.y - player.size / 2, player.size, player.size);
  ctx.shadowBlur = 0;
  ctx.fillStyle = "#0e1430";
  ctx.fillRect(player.x - 6, player.y - 5, 4, 4); ctx.fillRect(player.x + 2, player.y - 5, 4, 4);
  if (state !== "playing") {
    ctx.fillStyle = "rgba(11,16,32,0.55)";
    ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = "#ffffff";
    ctx.textAlign = "center";
    ctx.font = "700 40px system-ui, sans-serif";
    ctx.fillText(state === "over" ? "Game over" : "Ready?", W / 2, H / 2 - 12);
    ctx.font = "500 18px system-ui, sans-serif";
    ctx.fillStyle = "#cbd5e1";
    ctx.fillText(state === "over" ? "Score " + score + "  \\u2022  press Space or Restart" : "Press Space or the Start button",
                 W / 2, H / 2 + 24);
  }
}
function loop(t) {
  var dt = Math.min(0.05, (t - lastTime) / 1000 || 0);
  lastTime = t;
  if (state === "playing") { update(dt); }
  draw();
  requestAnimationFrame(loop);
}
document.addEventListener("keydown", function (ev) {
  if (["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", " "].indexOf(ev.key) >= 0) { ev.preventDefault(); }
  keys[ev.key] = true;
  if (ev.key === " " && state !== "playing") { start(); }
});
document.addEventListener("keyup", function (ev) { keys[ev.key] = false; });
startBtn.addEventListener("click", start);
reset();
requestAnimationFrame(loop);
"""


def _lead_and_chips(b: Brief, tail: str, feats: list[str]) -> tuple[str, str]:
    """The hero sentence, and chips for the prompt terms the page does not show elsewhere."""
    lead = f"{_cap(b.phrases[0] if b.phrases else b.subject)}. {tail}"
    shown = " ".join([b.title, lead] + feats).lower()
    chips = "".join(f"<li>{e(_cap(t))}</li>" for t in b.extra_terms(shown)[:8])
    return lead, chips


def game(b: Brief) -> tuple[str, str, str]:
    light = mix(b.accent, "#ffffff", 0.45)
    feats = [_cap(p) for p in b.features(6)]
    how = ["Press Start (or Space) to begin.", "Collect the gold orbs: 10 points each.",
           "Dodge the red blocks: one touch ends the run.", "Every 50 points another block joins in."]
    lead, chips = _lead_and_chips(b, "Move, collect, survive: how long can you last?", feats)
    body = (page_header(b, "Arcade", lead)
            + '<main class="container game">'
            + '<div class="stage"><canvas id="game-canvas" width="800" height="500" tabindex="0" '
              f'aria-label="{e(b.title)} game area">Your browser does not support the canvas element.</canvas></div>'
            + '<aside class="side"><section class="panel"><h2>Score</h2><div class="scores">'
              '<div class="score"><span>Score</span><strong id="score">0</strong></div>'
              '<div class="score"><span>Best</span><strong id="best">0</strong></div></div>'
              '<button class="btn" id="start-btn" type="button">Start game</button></section>'
            + '<section class="panel"><h2>Controls</h2><p class="keys"><kbd>&larr;</kbd><kbd>&uarr;</kbd>'
              '<kbd>&darr;</kbd><kbd>&rarr;</kbd><span>move</span></p>'
              '<p class="keys" style="margin-top:.6rem"><kbd>Space</kbd><span>start or restart</span></p></section>'
            + f'<section class="panel"><h2>How to play</h2><ul class="how">{"".join(f"<li>{e(h)}</li>" for h in how)}</ul>'
              '</section>'
            + (f'<section class="panel"><h2>Features</h2>{checklist(feats)}' if feats else '<section class="panel">')
            + (f'<ul class="chips" aria-label="Tags">{chips}</ul>' if chips else "")
            + "</section></aside></main>")
    css = fill_slots(GAME_CSS, glow=mix(b.accent, "#0b1020", 0.35), light=light)
    js = fill_slots(GAME_JS, accent=b.accent, light=light)
    return body, css, js


# --------------------------------------------------------------------------------------------
# 3D design
# --------------------------------------------------------------------------------------------

THREE_D_CSS = """
body{background:#0f172a;color:#e2e8f0}
.app-header{background:radial-gradient(800px 320px at 80% 0%,{{glow}},transparent 70%),#0f172a}
.app-header h1{color:#fff}
.app-header .lead{color:#cbd5e1}
.app-header .eyebrow{color:{{light}}}
.layout{display:grid;grid-template-columns:minmax(0,1.4fr) minmax(0,1fr);gap:32px;align-items:center;padding:24px 24px 64px}
.scene{height:460px;display:grid;place-items:center;perspective:1100px;perspective-origin:50% 40%;border-radius:24px;background:radial-gradient(circle at 50% 45%,#1e293b,#0b1222 70%);border:1px solid #1e293b;cursor:grab;touch-action:none;user-select:none;overflow:hidden}
.scene.dragging{cursor:grabbing}
.rotor{position:relative;width:220px;height:220px;transform-style:preserve-3d;transition:transform .08s linear}
.cube{position:absolute;inset:0;transform-style:preserve-3d;animation:spin 24s linear infinite}
.paused .cube{animation-play-state:paused}
@keyframes spin{from{transform:rotateY(0deg)}to{transform:rotateY(360deg)}}
.face{position:absolute;inset:0;display:flex;flex-direction:column;justify-content:flex-end;padding:18px;border-radius:18px;color:#fff;border:1px solid rgba(255,255,255,.25);box-shadow:inset 0 0 40px rgba(255,255,255,.08);backface-visibility:visible}
.face strong{font-size:1.5rem;line-height:1.2;overflow-wrap:anywhere}
.face span{font-size:.85rem;opacity:.9}
.face .num{position:absolute;top:14px;right:16px;font-size:.8rem;font-weight:700;letter-spacing:.08em}
.f1{transform:rotateY(0deg) translateZ(110px)}
.f2{transform:rotateY(90deg) translateZ(110px)}
.f3{transform:rotateY(180deg) translateZ(110px)}
.f4{transform:rotateY(-90deg) translateZ(110px)}
.f5{transform:rotateX(90deg) translateZ(110px)}
.f6{transform:rotateX(-90deg) translateZ(110px)}
.controls{display:flex;flex-wrap:wrap;gap:10px;margin:18px 0}
.controls .btn{min-width:48px}
.info .panel{background:#111a2e;border-color:#1e293b;color:#e2e8f0;box-shadow:none}
.info h2{color:#fff}
.info .checklist .icon{color:{{light}}}
.info .chips li{background:#1e293b;color:#e2e8f0}
.info .btn-ghost{color:#e2e8f0;border-color:#64748b}
.info .btn-ghost:hover{border-color:#e2e8f0}
.hint{color:#94a3b8;font-size:.95rem}
@media (max-width:900px){.layout{grid-template-columns:1fr}.scene{height:360px}}
"""

THREE_D_JS = """
var scene = document.getElementById("scene");
var rotor = document.getElementById("rotor");
var rx = -18, ry = 24, dragging = false, lastX = 0, lastY = 0;
function apply() { rotor.style.transform = "rotateX(" + rx + "deg) rotateY(" + ry + "deg)"; }
scene.addEventListener("pointerdown", function (ev) {
  dragging = true; lastX = ev.clientX; lastY = ev.clientY;
  scene.classList.add("dragging");
  scene.setPointerCapture(ev.pointerId);
});
scene.addEventListener("pointermove", function (ev) {
  if (!dragging) { return; }
  ry += (ev.clientX - lastX) * 0.5;
  rx = Math.max(-80, Math.min(80, rx - (ev.clientY - lastY) * 0.5));
  lastX = ev.clientX; lastY = ev.clientY;
  apply();
});
function stop() { dragging = false; scene.classList.remove("dragging"); }
scene.addEventListener("pointerup", stop);
scene.addEventListener("pointercancel", stop);
document.querySelectorAll("[data-rotate]").forEach(function (btn) {
  btn.addEventListener("click", function () {
    var d = btn.getAttribute("data-rotate");
    if (d === "left") { ry -= 45; } else if (d === "right") { ry += 45; }
    else if (d === "up") { rx = Math.min(80, rx + 30); } else if (d === "down") { rx = Math.max(-80, rx - 30); }
    else { rx = -18; ry = 24; }
    apply();
  });
});
var pause = document.getElementById("pause-btn");
pause.addEventListener("click", function () {
  var paused = scene.classList.toggle("paused");
  pause.textContent = paused ? "Resume spin" : "Pause spin";
  pause.setAttribute("aria-pressed", paused ? "true" : "false");
});
document.addEventListener("keydown", function (ev) {
  var map = { ArrowLeft: [0, -15], ArrowRight: [0, 15], ArrowUp: [15, 0], ArrowDown: [-15, 0] };
  if (map[ev.key]) { ev.preventDefault(); rx = Math.max(-80, Math.min(80, rx + map[ev.key][0])); ry += map[ev.key][1]; apply(); }
});
apply();
"""


def design_3d(b: Brief) -> tuple[str, str, str]:
    feats = b.features(6)
    labels = ["Front", "Right", "Back", "Left", "Top", "Bottom"]
    hues = [b.accent, mix(b.accent, "#0ea5e9", 0.5), mix(b.accent, "#f59e0b", 0.55),
            mix(b.accent, "#10b981", 0.5), mix(b.accent, "#ec4899", 0.5), mix(b.accent, "#0f172a", 0.4)]
    faces = "".join(
        f'<div class="face f{i + 1}" style="background:linear-gradient(145deg,{hues[i]},{mix(hues[i], "#0f172a", 0.55)})">'
        f'<span class="num">0{i + 1}</span><strong>{lab}</strong><span>{e(b.title)}</span></div>'
        for i, lab in enumerate(labels))
    buttons = "".join(f'<button class="btn btn-small" type="button" data-rotate="{d}" aria-label="Rotate {d}">{s}</button>'
                      for d, s in (("left", "&larr;"), ("up", "&uarr;"), ("down", "&darr;"), ("right", "&rarr;")))
    buttons += ('<button class="btn btn-small btn-ghost" type="button" data-rotate="reset">Reset</button>'
                '<button class="btn btn-small btn-ghost" id="pause-btn" type="button" aria-pressed="false">Pause spin</button>')
    lead, chips = _lead_and_chips(b, "Drag the object, or use the buttons and arrow keys.", feats)
    body = (page_header(b, "3D scene", lead)
            + '<main class="container layout">'
            + '<div class="scene" id="scene" role="group" aria-label="Rotating 3D model: drag to turn it">'
              f'<div class="rotor" id="rotor"><div class="cube">{faces}</div></div></div>'
            + '<div class="info"><section class="panel"><h2>Explore the model</h2>'
              f'<p class="hint">A six-sided model built from plain CSS 3D transforms. Drag to orbit; it keeps '
              f'spinning slowly on its own.</p>{checklist([_cap(p) for p in feats[:5]])}'
              f'<div class="controls">{buttons}</div>'
            + (f'<ul class="chips" aria-label="Tags">{chips}</ul>' if chips else "")
            + "</section></div></main>")
    glow = mix(b.accent, "#0f172a", 0.35)
    light = mix(b.accent, "#ffffff", 0.5)
    return body, fill_slots(THREE_D_CSS, glow=glow, light=light), THREE_D_JS


# --------------------------------------------------------------------------------------------
# UI components
# --------------------------------------------------------------------------------------------

UI_CSS = """
body{background:var(--surface)}
.demo{display:grid;grid-template-columns:minmax(0,1.5fr) minmax(0,1fr);gap:28px;align-items:start;padding-bottom:64px}
.demo.wide{grid-template-columns:minmax(0,1fr)}
.stage{background:#fff;border:1px solid var(--line);border-radius:24px;padding:36px;box-shadow:var(--shadow);min-height:320px}
.notes h2{font-size:1.15rem}
.switch{position:relative;display:inline-flex;align-items:center;width:52px;height:30px;border-radius:999px;border:0;background:#cbd5e1;cursor:pointer;flex:none;padding:0;transition:background .2s ease}
.switch::after{content:"";position:absolute;left:4px;width:22px;height:22px;border-radius:50%;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.3);transition:transform .2s ease}
.switch[aria-checked="true"]{background:var(--accent)}
.switch[aria-checked="true"]::after{transform:translateX(22px)}
.toggle-row{display:flex;justify-content:center;align-items:center;gap:12px;margin-bottom:28px;font-weight:600}
.save{font-size:.8rem;font-weight:700;color:#047857;background:#ecfdf5;border-radius:999px;padding:.15rem .6rem}
.plans{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:16px}
.plan{border:1px solid var(--line);border-radius:18px;padding:24px;display:flex;flex-direction:column;gap:.6rem;position:relative;background:#fff}
.plan.popular{border:2px solid var(--accent);box-shadow:0 16px 30px -12px rgba(17,24,39,.25);transform:translateY(-6px)}
.plan .amount{font-size:2.2rem;font-weight:800;color:var(--ink);line-height:1}
.plan .per{color:var(--muted);font-size:.9rem}
.plan .btn{margin-top:auto}
.tag{position:absolute;top:-12px;left:20px;background:var(--accent);color:#fff;font-size:.75rem;font-weight:700;padding:.2rem .65rem;border-radius:999px}
.tablist{position:relative;display:flex;gap:4px;border-bottom:1px solid var(--line);overflow-x:auto}
.tab{font:inherit;font-weight:600;color:var(--muted);background:none;border:0;padding:.8rem 1rem;cursor:pointer;white-space:nowrap}
.tab[aria-selected="true"]{color:var(--accent-ink)}
.tab-ink{position:absolute;bottom:-1px;height:3px;border-radius:3px;background:var(--accent);transition:left .25s ease,width .25s ease}
.tabpanel{padding:24px 4px 4px}
.accordion{display:grid;gap:12px}
.acc-item{border:1px solid var(--line);border-radius:14px;overflow:hidden;background:#fff}
.acc-btn{width:100%;display:flex;justify-content:space-between;align-items:center;gap:12px;text-align:left;font:inherit;font-weight:650;color:var(--ink);background:none;border:0;padding:16px 20px;cursor:pointer}
.acc-btn .chev{transition:transform .2s ease;color:var(--accent-ink);flex:none}
.acc-btn[aria-expanded="true"] .chev{transform:rotate(180deg)}
.acc-panel{padding:0 20px 18px;color:var(--muted)}
.backdrop{position:fixed;inset:0;background:rgba(15,23,42,.55);display:grid;place-items:center;padding:18px;z-index:50}
.backdrop[hidden]{display:none}
.dialog{width:100%;max-width:440px;background:#fff;border-radius:20px;padding:28px;box-shadow:0 30px 60px rgba(15,23,42,.35)}
.warn{display:grid;place-items:center;width:52px;height:52px;border-radius:50%;background:#fef2f2;color:#b91c1c;margin-bottom:14px}
.dialog-actions{display:flex;flex-wrap:wrap;justify-content:flex-end;gap:10px;margin-top:18px}
.btn-danger{background:#b91c1c;border-color:#b91c1c}
.vform{display:grid;gap:16px;max-width:460px}
.msg{font-size:.85rem;min-height:1.2em;margin:0;color:#b91c1c}
.msg.ok{color:#047857}
.strength{height:8px;border-radius:999px;background:#eef2f7;overflow:hidden}
.strength i{display:block;height:100%;width:0;background:#b91c1c;transition:width .2s ease,background .2s ease}
.btn[disabled]{opacity:.7;cursor:progress}
.settings{list-style:none;margin:0;padding:0;display:grid;gap:4px}
.settings li{display:flex;justify-content:space-between;align-items:center;gap:16px;padding:14px 0;border-bottom:1px solid var(--line)}
.settings small{display:block;color:var(--muted)}
.opts{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:14px}
.opt{border:1px solid var(--line);border-radius:16px;padding:20px;display:flex;flex-direction:column;gap:.6rem}
.opt.on{border-color:var(--accent);background:var(--accent-soft)}
.opt .btn{margin-top:auto}
.status{margin-top:18px;color:var(--muted)}
@media (max-width:900px){.demo{grid-template-columns:minmax(0,1fr)}.stage{padding:22px}}
@media (max-width:520px){.tab{padding:.7rem .55rem;font-size:.95rem}.stage{padding:18px}}
"""

CHEVRON = ('<svg class="chev" viewbox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" '
           'stroke-width="2.5" stroke-linecap="round" aria-hidden="true"><path d="M6 9l6 6 6-6" /></svg>')


def _ui_pricing(b: Brief) -> tuple[str, str]:
    r = b.rng
    base = r.choice((9, 12, 15, 19))
    names = ("Starter", "Pro", "Business")
    perks = (["Up to 3 projects", "Basic analytics", "Email support"],
             ["Unlimited projects", "Advanced analytics", "Priority support"],
             ["Everything in Pro", "Single sign-on", "Dedicated manager"])
    cards_html = []
    for i, name in enumerate(names):
        monthly = base * (1, 3, 6)[i]
        yearly = round(monthly * 10 / 12)
        pop = i == 1
        cards_html.append(
            f'<article class="plan{" popular" if pop else ""}">' + ('<span class="tag">Most popular</span>' if pop else "")
            + f'<h3>{name}</h3><p class="amount">$<span class="price" data-monthly="{monthly}" data-yearly="{yearly}">'
              f'{monthly}</span></p><p class="per"><span class="period">per month, billed monthly</span></p>'
            + checklist(perks[i])
            + f'<button class="btn{"" if pop else " btn-ghost"}" type="button">Choose {name}</button></article>')
    html_ = ('<div class="toggle-row"><span>Monthly</span>'
             '<button class="switch" id="billing" type="button" role="switch" aria-checked="false" '
             'aria-label="Yearly billing"></button><span>Yearly</span><span class="save">Save 17%</span></div>'
             f'<div class="plans">{"".join(cards_html)}</div>')
    js = """
var sw = document.getElementById("billing");
sw.addEventListener("click", function () {
  var yearly = sw.getAttribute("aria-checked") !== "true";
  sw.setAttribute("aria-checked", yearly ? "true" : "false");
  document.querySelectorAll(".price").forEach(function (p) {
    p.textContent = p.getAttribute(yearly ? "data-yearly" : "data-monthly");
  });
  document.querySelectorAll(".period").forEach(function (p) {
    p.textContent = yearly ? "per month, billed yearly" : "per month, billed monthly";
  });
});
"""
    return html_, js


def _ui_tabs(b: Brief) -> tuple[str, str]:
    names = proper_nouns(b.prompt, b.title)[:5]
    if len(names) < 3:
        names = [short_title(p, 2) for p in b.features(4)][:4]
    tabs, panels = [], []
    for i, name in enumerate(names):
        tid, pid = b.uid(f"tab-{name}"), b.uid(f"panel-{name}")
        sel = "true" if i == 0 else "false"
        tabs.append(f'<button class="tab" id="{tid}" type="button" role="tab" aria-selected="{sel}" '
                    f'aria-controls="{pid}" tabindex="{0 if i == 0 else -1}">{e(name)}</button>')
        body = (f"<h3>{e(name)}</h3><p>This is the {e(name.lower())} panel. It holds the details people look for "
                f"first, written in short, scannable lines.</p>"
                + checklist([f"{name} highlight {k}" for k in (1, 2, 3)]))
        panels.append(f'<div class="tabpanel" id="{pid}" role="tabpanel" aria-labelledby="{tid}"'
                      f'{"" if i == 0 else " hidden"}>{body}</div>')
    html_ = (f'<div class="tablist" role="tablist" aria-label="{e(b.title)}">{"".join(tabs)}'
             f'<span class="tab-ink" aria-hidden="true"></span></div>{"".join(panels)}')
    js = """
var tabs = Array.prototype.slice.call(document.querySelectorAll(".tab"));
var ink = document.querySelector(".tab-ink");
function select(tab, focus) {
  tabs.forEach(function (t) {
    var on = t === tab;
    t.setAttribute("aria-selected", on ? "true" : "false");
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  });
  ink.style.left = tab.offsetLeft + "px";
  ink.style.width = tab.offsetWidth + "px";
  if (focus) { tab.focus(); }
}
tabs.forEach(function (tab, i) {
  tab.addEventListener("click", function () { select(tab, false); });
  tab.addEventListener("keydown", function (ev) {
    var next = null;
    if (ev.key === "ArrowRight") { next = tabs[(i + 1) % tabs.length]; }
    if (ev.key === "ArrowLeft") { next = tabs[(i - 1 + tabs.length) % tabs.length]; }
    if (ev.key === "Home") { next = tabs[0]; }
    if (ev.key === "End") { next = tabs[tabs.length - 1]; }
    if (next) { ev.preventDefault(); select(next, true); }
  });
});
select(tabs[0], false);
window.addEventListener("resize", function () {
  select(tabs.filter(function (t) { return t.getAttribute("aria-selected") === "true"; })[0], false);
});
"""
    return html_, js


def _ui_modal(b: Brief) -> tuple[str, str]:
    action = next((t for t in b.terms if t in {"deletion", "delete", "logout", "cancel", "remove", "publish"}), "")
    confirm = "Delete" if action in {"deletion", "delete"} else "Confirm"
    warn = ('<svg viewbox="0 0 24 24" width="28" height="28" fill="none" stroke="currentColor" stroke-width="2" '
            'stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M12 3 2 21h20z" />'
            '<path d="M12 10v5M12 18h.01" /></svg>')
    subject = b.subject
    html_ = (f'<div class="trigger"><h3>{e(_cap(subject))}</h3><p>Open the dialog to review the action before '
             f'it happens.</p><button class="btn" id="open-modal" type="button">Open dialog</button>'
             f'<p class="status" id="modal-status" role="status" aria-live="polite">Dialog is open.</p></div>'
             f'<div class="backdrop" id="backdrop">'
             f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="dialog-title" aria-describedby="dialog-desc">'
             f'<div class="warn">{warn}</div><h3 id="dialog-title">Are you sure?</h3>'
             f'<p id="dialog-desc">This cannot be undone. Anything linked to it will be removed for good.</p>'
             f'<div class="dialog-actions"><button class="btn btn-ghost" id="cancel-btn" type="button">Cancel</button>'
             f'<button class="btn btn-danger" id="confirm-btn" type="button">{confirm}</button></div></div></div>')
    js = """
var backdrop = document.getElementById("backdrop");
var status = document.getElementById("modal-status");
var opener = document.getElementById("open-modal");
function openModal() { backdrop.hidden = false; status.textContent = "Dialog is open."; document.getElementById("cancel-btn").focus(); }
function closeModal(msg) { backdrop.hidden = true; status.textContent = msg; opener.focus(); }
opener.addEventListener("click", openModal);
document.getElementById("cancel-btn").addEventListener("click", function () { closeModal("Cancelled. Nothing changed."); });
document.getElementById("confirm-btn").addEventListener("click", function () { closeModal("Done. The action was confirmed."); });
backdrop.addEventListener("click", function (ev) { if (ev.target === backdrop) { closeModal("Closed by clicking outside."); } });
document.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && !backdrop.hidden) { closeModal("Closed with Escape."); } });
"""
    return html_, js


def _ui_accordion(b: Brief) -> tuple[str, str]:
    topics = [p for p in b.features(6) if not has(p, "accordion", "answer", "open", "time")]
    topics = [re.sub(r"^(questions|faqs?)\s+(about|on)\s+", "", t, flags=re.I) for t in topics[:5]]
    topics = topics or ["getting started", "billing", "support"]
    items = []
    for i, t in enumerate(topics):
        bid, pid = b.uid(f"acc-{t}"), b.uid(f"acc-panel-{t}")
        open_ = i == 0
        items.append(
            f'<div class="acc-item"><h3 style="margin:0"><button class="acc-btn" id="{bid}" type="button" '
            f'aria-expanded="{"true" if open_ else "false"}" aria-controls="{pid}">'
            f'<span>What should I know about {e(t.lower())}?</span>{CHEVRON}</button></h3>'
            f'<div class="acc-panel" id="{pid}" role="region" aria-labelledby="{bid}"{"" if open_ else " hidden"}>'
            f'<p>Here is a short, clear answer about {e(t.lower())}. Reach out to our team if you need more detail.</p>'
            f"</div></div>")
    html_ = f'<div class="accordion">{"".join(items)}</div>'
    js = """
var buttons = Array.prototype.slice.call(document.querySelectorAll(".acc-btn"));
buttons.forEach(function (btn) {
  btn.addEventListener("click", function () {
    var opening = btn.getAttribute("aria-expanded") !== "true";
    buttons.forEach(function (other) {
      other.setAttribute("aria-expanded", "false");
      document.getElementById(other.getAttribute("aria-controls")).hidden = true;
    });
    if (opening) {
      btn.setAttribute("aria-expanded", "true");
      document.getElementById(btn.getAttribute("aria-controls")).hidden = false;
    }
  });
});
"""
    return html_, js


def _ui_form(b: Brief) -> tuple[str, str]:
    pw = has(b.prompt, "password")
    fields = [("name", "Full name", "text", "name", "Alex Morgan"),
              ("email", "Email address", "email", "email", "alex@example.com")]
    if pw:
        fields.append(("password", "Password", "password", "new-password", "At least 8 characters"))
    rows = []
    for key, label, typ, auto, hint in fields:
        extra = ('<div class="strength" aria-hidden="true"><i id="strength-bar"></i></div>' if key == "password" else "")
        rows.append(f'<div class="field"><label for="f-{key}">{label}</label>'
                    f'<input id="f-{key}" name="{key}" type="{typ}" autocomplete="{auto}" placeholder="{hint}" required="required" '
                    f'aria-describedby="m-{key}" />{extra}<p class="msg" id="m-{key}" aria-live="polite"></p></div>')
    html_ = (f'<form class="vform" id="signup" novalidate="novalidate"><div><h3>Create your account</h3>'
             f'<p class="status" style="margin:0">It takes less than a minute.</p></div>{"".join(rows)}'
             '<button class="btn" id="submit-btn" type="submit">Create account</button>'
             '<p class="status" id="form-status" role="status" aria-live="polite"></p></form>')
    js = """
var form = document.getElementById("signup");
var rules = {
  name: function (v) { return v.trim().length >= 2 ? "" : "Please enter your name."; },
  email: function (v) { return /^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$/.test(v) ? "" : "Enter a valid email address."; },
  password: function (v) { return v.length >= 8 ? "" : "Use at least 8 characters."; }
};
function check(input) {
  var rule = rules[input.name];
  var msg = rule ? rule(input.value) : "";
  var out = document.getElementById("m-" + input.name);
  out.textContent = msg || "Looks good.";
  out.classList.toggle("ok", !msg);
  input.classList.toggle("invalid", !!msg);
  return !msg;
}
form.querySelectorAll("input").forEach(function (input) {
  input.addEventListener("blur", function () { check(input); });
  input.addEventListener("input", function () {
    if (input.classList.contains("invalid")) { check(input); }
    if (input.name === "password") {
      var v = input.value, s = 0;
      if (v.length >= 8) { s++; } if (/[A-Z]/.test(v)) { s++; } if (/[0-9]/.test(v)) { s++; } if (/[^A-Za-z0-9]/.test(v)) { s++; }
      var bar = document.getElementById("strength-bar");
      bar.style.width = (s * 25) + "%";
      bar.style.background = ["#b91c1c", "#b91c1c", "#b45309", "#0369a1", "#047857"][s];
    }
  });
});
form.addEventListener("submit", function (ev) {
  ev.preventDefault();
  var ok = Array.prototype.map.call(form.querySelectorAll("input"), check).every(Boolean);
  var status = document.getElementById("form-status");
  if (!ok) { status.textContent = "Please fix the highlighted fields."; return; }
  var btn = document.getElementById("submit-btn");
  btn.disabled = true; btn.textContent = "Creating account...";
  setTimeout(function () { btn.disabled = false; btn.textContent = "Create account"; status.textContent = "Account created. Welcome!"; form.reset(); }, 1200);
});
"""
    return html_, js


def _ui_switches(b: Brief) -> tuple[str, str]:
    items = b.features(5)
    rows = "".join(
        f'<li><span><strong>{e(short_title(p, 4))}</strong><small>Turn {e(p.lower())} on or off.</small></span>'
        f'<button class="switch" type="button" role="switch" aria-checked="{"true" if i % 2 == 0 else "false"}" '
        f'aria-label="{e(short_title(p, 4))}"></button></li>' for i, p in enumerate(items))
    html_ = (f'<ul class="settings">{rows}</ul><p class="status" id="switch-status" role="status" '
             f'aria-live="polite">Changes save automatically.</p>')
    js = """
document.querySelectorAll(".switch").forEach(function (sw) {
  sw.addEventListener("click", function () {
    var on = sw.getAttribute("aria-checked") !== "true";
    sw.setAttribute("aria-checked", on ? "true" : "false");
    document.getElementById("switch-status").textContent = sw.getAttribute("aria-label") + (on ? " enabled." : " disabled.");
  });
});
"""
    return html_, js


def _ui_cards(b: Brief) -> tuple[str, str]:
    items = b.features(6)[:6]
    if len(items) > 3:
        items = items[: len(items) // 2 * 2]

    def blurb(p: str) -> str:
        return f"{_cap(p)}." if len(p.split()) > len(short_title(p, 3).split()) else f"A ready-made {p.lower()} option."

    opts = "".join(
        f'<article class="opt"><span class="card-icon">{icon(i)}</span><h3>{e(short_title(p, 3))}</h3>'
        f'<p class="status" style="margin:0">{e(blurb(p))}</p>'
        f'<button class="btn btn-small btn-ghost" type="button" data-label="{e(short_title(p, 3))}">Select</button></article>'
        for i, p in enumerate(items))
    html_ = (f'<div class="opts">{opts}</div><p class="status" id="opt-status" role="status" aria-live="polite">'
             f"Nothing selected yet.</p>")
    js = """
document.querySelectorAll(".opt .btn").forEach(function (btn) {
  btn.addEventListener("click", function () {
    var card = btn.closest(".opt");
    var on = card.classList.toggle("on");
    btn.textContent = on ? "Selected" : "Select";
    var chosen = Array.prototype.map.call(document.querySelectorAll(".opt.on .btn"), function (b) { return b.getAttribute("data-label"); });
    document.getElementById("opt-status").textContent = chosen.length ? "Selected: " + chosen.join(", ") : "Nothing selected yet.";
  });
});
"""
    return html_, js


UI_KINDS = (
    (("pricing", "monthly", "yearly", "plans"), "pricing", _ui_pricing),
    (("tabs", "tab "), "tabs", _ui_tabs),
    (("modal", "dialog", "popup", "pop-up"), "modal", _ui_modal),
    (("accordion", "faq", "collaps"), "accordion", _ui_accordion),
    (("form", "validation", "sign-up", "signup", "login", "password"), "form", _ui_form),
    (("toggle", "switch"), "toggle", _ui_switches),
)


def ui_component(b: Brief) -> tuple[str, str, str]:
    kind, build = "cards", _ui_cards
    for words, name, fn in UI_KINDS:
        if has(b.prompt, *words):
            kind, build = name, fn
            break
    demo, js = build(b)
    wide = kind == "pricing"
    shown = " ".join([b.title, b.subject, demo]).lower()
    notes = [p for p in b.features(6) if p.lower() not in shown][:5]
    extra = b.extra_terms(shown + " ".join(notes).lower())
    chips = "".join(f"<li>{e(_cap(t))}</li>" for t in extra[:8])
    lead = (f"{_cap(b.phrases[0] if b.phrases else b.subject)}. Built with plain HTML, CSS and a few lines of "
            "JavaScript; works with mouse and keyboard.")
    body = (page_header(b, f"Component \u00b7 {kind}", lead)
            + f'<main class="container demo{" wide" if wide else ""}">'
            + f'<section class="stage" aria-label="Live demo">{demo}</section>'
            + '<aside class="panel notes"><h2>What it does</h2>'
            + checklist([_cap(p) for p in notes] or ["Works with mouse, touch and keyboard",
                                                      "Clear focus styles", "No dependencies"])
            + (f'<h2 style="margin-top:1.25rem">Keywords</h2><ul class="chips">{chips}</ul>' if chips else "")
            + "</aside></main>")
    return body, UI_CSS, js


# --------------------------------------------------------------------------------------------
# The policy
# --------------------------------------------------------------------------------------------

BUILDERS = {
    Category.WEBSITE: website,
    Category.DATA_VISUALIZATION: data_visualization,
    Category.GAME_DEV: game,
    Category.DESIGN_3D: design_3d,
    Category.UI_COMPONENT: ui_component,
}


def render_page(task: Task) -> str:
    """The page for a task (pure function of prompt and category)."""
    b = Brief.from_task(task)
    body, css, script = BUILDERS.get(task.category, website)(b)
    return document(b, body, css, script, f"{b.title}: {b.subject}")


@register_policy("template")
class TemplatePolicy:
    """Deterministic offline baseline; the registry passes an argument it does not need."""

    name = "template"

    def __init__(self, arg: str = "") -> None:
        self.arg = arg

    async def generate(self, task: Task) -> str:
        page = render_page(task)
        title = re.sub(r"[`<>]+", "", find_title(task.prompt)).strip() or "this brief"
        return (f"Here is a complete single-file page for {title}, with inline CSS and JavaScript and no "
                f"external dependencies.\n\n```html\n{page}```\n")
