"""What the page's words say about it, in any language: prompt terms, specificity, placeholders.

A page can satisfy every layout check and still read like a form letter: the prompt's nouns
pasted into stock sentences ("We put care into prices"), the same sentence frame repeated with a
different slot, no concrete detail the prompt did not already give, the requested content named
but not delivered (a "Prices" card with no price in it). Designers mark that down; so does this
module, from the text alone:

* `tokens` splits text in any script: words of alphabetic scripts (folded by `stem`) and
  character bigrams of Chinese, Japanese and Korean runs, which have no spaces between words.
* `copy_profile` measures specificity: distinct concrete words beyond the prompt, repeated
  sentence frames, sentences that only echo the prompt, stock phrases and placeholder copy.
* `requested_content` checks that content the prompt asks for is there in the form it takes
  (prices are amounts, opening hours are times, testimonials are attributed quotes).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Chinese, Japanese (kana) and Korean (Hangul) characters: scripts written without spaces.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK_CHARS}]+|[^\W\d_{_CJK_CHARS}](?:[^\W_{_CJK_CHARS}]|['’-](?=[^\W\d_]))*")
_CJK_RUN = re.compile(rf"^[{_CJK_CHARS}]+$")
# Single-character function words and particles: a CJK run is cut at them before it is cut
# into bigrams, so "菜单和价格" gives 菜单 and 价格, not the junk bigrams 单和 and 和价.
_CJK_FUNCTION = re.compile("[的和与及或为在了是个一并把被让给对从向以等也都很要请这那其之"
                           "をがはにのでともへやか]")

EN_STOPWORDS = frozenset("""
a about above after again against all also allow allows along among an and any are around as at
be because been before being below between both but by can could did do does doing down during
each either else even every few for from further get gets give gives had has have having here how
however i if in into is it its itself just least less let lets like likely made make makes making
many may me might more most much must my need needs new next no nor not now of off on once one only
onto or other our ours out over own per please same she should show shows showing so some such than
that the their theirs them then there these they this those through to too under until up upon us
use used uses using very want wants was way we well were what when where which while who whom whose
why will with within without would yet you your yours
create creates creating build builds building design designs designed designing develop implement
generate produce write need make made page pages webpage website websites site sites web html css
landing homepage home onepage
javascript single file code app application include includes including included contain contains
containing feature featuring add adds provide provides display displays displayed showing shown
section sections element elements component components layout area areas part parts item items
button buttons card cards panel panels block blocks container grid list lists table icon icons image
images chart charts graph widget screen view modern beautiful clean nice sleek stylish elegant simple
minimal minimalist responsive interactive animated animation animations smooth stunning professional
polished attractive visually visual style styled styling theme themed look looks feel color colors
colour colours colored coloured dark light bold bright vibrant gradient effect effects subtle
something thing things different various several user users visitor visitors people someone
should also really quite able when while
""".split())

# Function words and request verbs of the other languages model prompts come in most often.
OTHER_STOPWORDS = frozenset("""
el la los las un una unos unas de del al y o en con para por que es son se su sus como más muy
crea crear diseña diseñar construye construir haz hacer página web sitio incluye incluir incluya
una un sección secciones moderna moderno bonito elegante diseño estilo
le la les un une des de du et ou en avec pour par que qui est sont se son sa ses comme plus très
crée créer conçois concevoir construis page site inclure inclut section sections moderne élégant
der die das ein eine einen einem einer und oder in mit für von zu den dem des ist sind sich sein
seine wie mehr sehr erstelle erstellen gestalte gestalten baue bauen seite webseite website enthält
enthalten abschnitt abschnitte modern modernes elegant
o a os as um uma de do da dos das e ou em com para por que é são se seu sua como mais muito
cria criar crie projete projetar construa construir página site inclua incluir seção seções
il lo gli crea creare pagina sito includi includere sezione sezioni moderno
""".split())

# Bigrams of CJK request boilerplate ("create a page that includes ...") carry no content.
CJK_FILLER = frozenset("""
创建 建一 一个 个网 网页 页面 设计 计一 包含 含有 使用 我们 需要 要一 一款 制作 作一 以及 并且 名叫 叫做 一家
可以 具有 一些 显示 展示 现代 风格 简洁 美观 漂亮 响应 应式 的网 的页 页，
作成 成し して くだ ださ さい する ため ペー ージ ウェ ェブ ブペ サイ イト のペ のウ を作 作っ って
ます です した ある いる こと もの よう など ての での には とし して
만들 들어 어주 주세 세요 페이 이지 웹사 사이 이트 포함 하는 있는
""".split())

STOPWORDS = EN_STOPWORDS | OTHER_STOPWORDS


def stem(word: str) -> str:
    """Plural/tense folding good enough to match 'pastries'~'pastry', 'rotating'~'rotate'."""
    w = word.lower().replace("’", "'").strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)] + repl
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 4:
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    return w


def is_cjk(token: str) -> bool:
    return bool(_CJK_RUN.match(token))


def _words(text: str) -> list[tuple[str, str]]:
    """(as written, folded) for each token of `text` in reading order: words folded by `stem`,
    CJK runs cut into bigrams (folded = as written)."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text.lower()):
        run = m.group(0)
        if is_cjk(run):
            for piece in _CJK_FUNCTION.split(run):
                grams = [piece] if len(piece) == 1 else [piece[i:i + 2] for i in range(len(piece) - 1)]
                out.extend((g, g) for g in grams if g)
        else:
            for part in re.split(r"[-/]", run):
                if part.strip("'’"):
                    out.append((part.strip("'’"), stem(part)))
    return out


def tokens(text: str) -> list[str]:
    """Folded tokens of `text` in reading order: stems of words, bigrams of CJK runs."""
    return [folded for _, folded in _words(text)]


def _carries_content(word: str, folded: str) -> bool:
    if is_cjk(folded):
        return folded not in CJK_FILLER
    return len(folded) >= 3 and word not in STOPWORDS and folded not in STOPWORDS


def content_tokens(text: str) -> list[str]:
    """Tokens that carry content: no stopwords (as written or folded: "landing" is not "land"),
    words of 3+ letters, CJK bigrams that are not boilerplate."""
    return [folded for word, folded in _words(text) if _carries_content(word, folded)]


def stems_match(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) < 5:
        return False
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n >= 5 and n >= min(len(a), len(b)) - 2


_QUOTED = re.compile(r"[\"“”«»「」『』]([^\"“”«»「」『』]{2,60})[\"“”«»「」『』]")


def prompt_terms(prompt: str) -> tuple[list[str], list[str]]:
    """(key terms, quoted phrases) of a prompt, in any language: stems of content words of 4+
    letters, and CJK bigrams that are not request boilerplate."""
    phrases = sorted({p.strip().lower() for p in _QUOTED.findall(prompt) if p.strip()})
    terms = {t for t in content_tokens(prompt) if is_cjk(t) or (len(t) >= 4 and not t.isdigit())}
    return sorted(terms), phrases


def text_stems(text: str) -> set[str]:
    return set(tokens(text))


def full_coverage_at(terms: list[str]) -> float:
    """The share of prompt terms that earns full marks. Style words ("rotating", "glowing") rarely
    appear as text, so about 85% suffices; CJK bigrams also span word boundaries ("个咖" in
    "咖啡店创建") that no page repeats, so their share needs less."""
    if not terms:
        return 1.0
    cjk = sum(is_cjk(t) for t in terms) / len(terms)
    return 0.85 - 0.35 * cjk


# ---------------------------------------------------------------------------------------------
# Specificity: does the copy say something the prompt did not?
# ---------------------------------------------------------------------------------------------

# Stock phrases of template copy in the languages above: each costs a little, many cost a lot.
_STOCK = re.compile("|".join((
    r"\bwelcome to\b", r"\bget started\b", r"\blearn more\b", r"\ball in one place\b", r"\bmade with care\b",
    r"\bwhy (?:people |customers |clients )?choose us\b", r"\bour (?:features|services|mission)\b",
    r"\beasy to (?:use|follow)\b", r"\bwhat matters most\b", r"\bwe(?:'re| are) (?:here|happy) to help\b",
    r"\bsign up (?:today|now)\b", r"\bjoin (?:us|thousands)\b", r"\btake (?:it|your \w+) to the next level\b",
    r"\bcutting[- ]edge\b", r"\bseamless(?:ly)?\b", r"\bstate[- ]of[- ]the[- ]art\b", r"\bbest[- ]in[- ]class\b",
    r"\bunlock (?:the|your)\b", r"\belevate your\b", r"\bat a glance\b", r"\bexplore (?:our|the|more)\b",
    r"\bbienvenid[oa]s? a\b", r"\bbienvenue\b", r"\bwillkommen\b", r"\bbem-vindo\b", r"欢迎来到", r"ようこそ",
    r"\bjetzt (?:anmelden|starten|loslegen)\b", r"\bbereit (?:loszulegen|für)\b", r"\bseien sie dabei\b",
    r"\bmehr erfahren\b", r"\bmás información\b", r"\b(?:empieza|comienza) (?:ya|ahora|hoy)\b",
    r"\ben savoir plus\b", r"\bcommencez (?:maintenant|dès aujourd'hui)\b", r"\bsaiba mais\b",
    r"\bcomece (?:agora|já)\b", r"了解更多", r"立即开始", r"詳しく(?:見る|はこちら)", r"今すぐ始め",
)), re.I)

_PLACEHOLDER = re.compile("|".join((
    r"\blorem\b", r"\bipsum\b", r"\bdolor sit\b", r"\bconsectetur\b",
    r"\byour (?:title|text|heading|headline|company|name|logo|content|tagline|description) here\b",
    r"\b(?:text|content|image|title|description) goes here\b", r"\binsert [\w ]{1,20} here\b",
    r"\b(?:feature|item|card|product|service|section|title|heading|step|plan|member|project|slide|tab|option|"
    r"question|link|category|post|article|event|testimonial)\s+[1-9]\b(?!\s*[:.,%\d])",
    r"\bplaceholder\b", r"\bsample (?:text|content|title)\b", r"\[(?:company|your|insert|name|title)[^\]]{0,20}\]",
    r"\{\{\s*\w+\s*\}\}", r"\bTODO\b", r"\btbd\b", r"\bxxx+\b", r"\bjohn doe\b", r"\bacme\b",
)), re.I)

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|[\n•·|]+")


@dataclass
class CopyProfile:
    """Measured properties of a page's copy (all counts are of distinct items)."""

    words: int = 0                 # content tokens on the page
    distinct: int = 0              # distinct content tokens
    novel: int = 0                 # distinct content tokens the prompt does not contain
    verbatim: float = 0.0          # share of the page's tokens in 4+ token runs copied from the prompt
    sentences: int = 0             # sentences of 5+ tokens
    repeated_frames: int = 0       # of those, how many share a frame with another (slots removed)
    echoes: int = 0                # of those, how many are mostly the prompt's own words
    stock: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)

    @property
    def frame_share(self) -> float:
        return self.repeated_frames / self.sentences if self.sentences else 0.0

    @property
    def novel_share(self) -> float:
        return self.novel / self.distinct if self.distinct else 0.0

    @property
    def echo_share(self) -> float:
        return self.echoes / self.sentences if self.sentences else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"content_words": self.words, "distinct_words": self.distinct, "novel_words": self.novel,
                "novel_share": round(self.novel_share, 3), "verbatim_prompt_share": round(self.verbatim, 3),
                "sentences": self.sentences,
                "repeated_frame_share": round(self.frame_share, 3), "prompt_echo_share": round(self.echo_share, 3),
                "stock_phrases": self.stock[:8], "placeholders": self.placeholders[:8]}


def _frame(sentence: list[str], prompt: set[str]) -> tuple[str, ...]:
    """The sentence with prompt words as one slot: 'we put care into _ so the details ...'."""
    out: list[str] = []
    for t in sentence:
        t = "_" if t in prompt else t
        if not (t == "_" and out and out[-1] == "_"):
            out.append(t)
    return tuple(out)


def copy_profile(prompt: str, blocks: list[str]) -> CopyProfile:
    """Profile the copy of a page given its text blocks (each element's own text, in order)."""
    prompt_set = set(content_tokens(prompt)) | set(tokens(prompt))
    words = [t for b in blocks for t in content_tokens(b)]
    novel = {t for t in words if t not in prompt_set and not any(stems_match(t, q) for q in prompt_set if len(q) >= 5)}
    sentences = []
    for block in blocks:
        for s in _SENTENCE_END.split(block):
            toks = tokens(s)
            if len(toks) >= 5:
                sentences.append(toks)
    distinct = list({tuple(s): s for s in sentences}.values())
    framed = [_frame(s, prompt_set) for s in distinct]
    frames = Counter(framed)
    repeated = sum(1 for f in framed if "_" in f and len(f) - f.count("_") >= 3 and frames[f] >= 2)
    echoes = 0
    for s in distinct:
        content = [t for t in s if _carries_content(t, t)]
        if len(content) >= 3 and sum(t in prompt_set for t in content) >= 0.6 * len(content):
            echoes += 1
    text = "\n".join(blocks)
    stock = sorted({m.group(0).lower() for m in _STOCK.finditer(text)})
    placeholders = sorted({m.group(0).lower() for m in _PLACEHOLDER.finditer(text)})
    return CopyProfile(words=len(words), distinct=len(set(words)), novel=len(novel),
                       verbatim=verbatim_spans(prompt, text)[0], sentences=len(distinct), repeated_frames=repeated,
                       echoes=echoes, stock=stock, placeholders=placeholders)


# ---------------------------------------------------------------------------------------------
# Requested content: is what the prompt names actually there, in the form it takes?
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContentKind:
    """Content a prompt can ask for (`asked`, matched on the prompt) and what delivering it looks
    like on the page (`shown`, matched on the visible text, `need` times)."""

    name: str
    asked: re.Pattern
    shown: re.Pattern
    need: int = 2
    categories: frozenset[str] = frozenset({"Website"})  # where a request for it means this content


def _rx(*alternatives: str) -> re.Pattern:
    return re.compile("|".join(alternatives), re.I)


_MONEY = (r"[$€£¥₹₩]\s?\d", r"\d[\d.,]*\s?(?:€|zł|kr|usd|eur|元|円|원)", r"\d+[.,]\d{2}\b(?!\s*%)")
CONTENT_KINDS: tuple[ContentKind, ...] = (
    ContentKind("prices", _rx(r"\bpric", r"\bpricing\b", r"\bcost", r"\btiers?\b", r"\bplans?\b", r"\bprecio", r"preis",
                              r"\bprix\b", r"\btarif", r"\bpreço", r"价格", r"价目", r"価格", r"料金", r"가격"),
                _rx(*_MONEY)),
    ContentKind("hours", _rx(r"\bhours\b", r"\bopening\b", r"\bschedule", r"\btimetable", r"\bagenda\b", r"\bhorario",
                             r"öffnungszeit", r"zeitplan", r"\bhoraire", r"\bcronograma", r"营业时间", r"日程", r"时间表",
                             r"営業時間", r"スケジュール", r"영업시간"),
                _rx(r"\b\d{1,2}[:.h]\d{2}\b", r"\b\d{1,2}\s?(?:am|pm)\b", r"\b\d{1,2}\s?[–-]\s?\d{1,2}\s?(?:uhr|h)\b",
                    r"\d{1,2}[:：]\d{2}", r"\d{1,2}時", r"\d{1,2}点"), need=2),
    ContentKind("testimonials", _rx(r"\btestimonial", r"\breviews?\b", r"\bquotes?\b", r"\btestimonio", r"\brese",
                                    r"\bavis\b", r"\bdepoimento", r"评价", r"レビュー", r"口コミ", r"후기"),
                _rx(r"[—–-]\s?[A-ZÀ-Ý][\w.]+(?:\s[A-ZÀ-Ý][\w.]*)?", r"[“\"«„][^”\"»“]{20,}[”\"»“]"), need=2),
    ContentKind("contact", _rx(r"\bcontact\b", r"\bcontacto\b", r"\bkontakt\b", r"\bcontato\b", r"联系", r"お問い合わせ",
                               r"연락"),
                _rx(r"[\w.+-]+@[\w-]+\.[\w.]+", r"\+?\d[\d\s().-]{7,}\d", r"\b\d{2,5}\s\w+\s(?:st|street|ave|road|rd|"
                    r"strasse|straße|calle|rue|rua)\b"), need=1),
    ContentKind("faq", _rx(r"\bfaq", r"\bquestions\b", r"\bpreguntas\b", r"\bfragen\b", r"常见问题", r"よくある質問"),
                _rx(r"[?？]"), need=3),
    ContentKind("statistics", _rx(r"\bstats?\b", r"\bstatistic", r"\bmetrics?\b", r"\bkpis?\b", r"\bdashboard",
                                  r"\banalytics\b", r"\bestadística", r"统计", r"指标", r"統計"),
                _rx(r"(?<![\w.])\d[\d,.]*\s?[%kKmM]?(?![\w])"), need=6,
                categories=frozenset({"Website", "Data Visualization"})),
)


def verbatim_spans(prompt: str, text: str, n: int = 4) -> tuple[float, set[int]]:
    """(share of the page's tokens inside runs of `n`+ tokens copied from the prompt, the indices
    of those tokens). A page that delivers a request rarely restates it word for word; one that
    pastes the request into its copy ("Snake that grows when it eats" as a feature bullet) does."""
    prompt_tokens = tokens(prompt)
    grams = {tuple(prompt_tokens[i:i + n]) for i in range(len(prompt_tokens) - n + 1)}
    page = tokens(text)
    covered: set[int] = set()
    for i in range(len(page) - n + 1):
        if tuple(page[i:i + n]) in grams:
            covered.update(range(i, i + n))
    return (len(covered) / len(page) if page else 0.0), covered


def requested_content(prompt: str, text: str, category: str = "Website") -> dict[str, dict[str, Any]]:
    """For each kind of content the prompt asks for: how often the page shows it, and whether
    that is enough ({"prices": {"found": 0, "need": 2, "ok": False}, ...}). Only kinds that mean
    this content in the task's category count: "contact" in a settings panel is not an address."""
    out = {}
    for kind in CONTENT_KINDS:
        if category in kind.categories and kind.asked.search(prompt):
            found = len(kind.shown.findall(text))
            out[kind.name] = {"found": found, "need": kind.need, "ok": found >= kind.need}
    return out
