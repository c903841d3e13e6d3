"""Vendored CDN mirror: serve the libraries and web fonts generated pages load from CDNs.

Generated pages pull Tailwind, three.js, Chart.js, Google Fonts... from public CDNs. The renderer
is offline, so without a mirror those pages render unstyled or blank and get judged on an
accident of the sandbox rather than on their code. `VendorMirror` answers CDN URLs from the npm
packages `aesenv setup` installs, and leaves everything else blocked.

What is carried is decided in one place, `aesenv/node/catalog.json`: each library's npm name,
cdnjs names and file layout, the builds installed (a second major under an npm alias such as
`chart.js-3`), the requested versions a build may answer, and example URLs that
tests/test_vendor_catalog.py resolves for every entry. `aesenv/node/package.json` is generated
from it (`python -m aesenv.node.catalog`); `LIBRARIES` below is read from it.

Rules a request goes through (each a small object in `RULES`, keyed by host):

* URL shape -> (package, requested version, file). Supported: `cdn.jsdelivr.net/npm/NAME@VER/PATH`,
  `unpkg.com/NAME@VER/PATH` (version optional, `?module` rewrites bare imports),
  `ga.jspm.io/npm:NAME@VER/PATH`, `cdnjs.cloudflare.com/ajax/libs/NAME/VER/FILE` (cdnjs names and
  flat file layout mapped onto npm packages in `LIBRARIES`; a cdnjs name several npm packages
  share, such as font-awesome (4 vs 5+) or popper.js (1 vs 2), goes to the one holding the
  requested major), the BootstrapCDN hosts (`maxcdn|stackpath.bootstrapcdn.com/NAME/VER/PATH`,
  same names), `use.fontawesome.com/releases/vVER/PATH`, `cdn.plot.ly/plotly[-bundle]-VER.min.js`
  (partial bundles get the full one, a superset; `plotly-latest` is 1.58.5 as on the real CDN),
  `code.jquery.com/jquery-VER.min.js` (and `jquery-latest`, frozen at 1.x), `d3js.org/d3.vN.min.js`,
  `cdn.tailwindcss.com` (any path and query), Google Fonts CSS (`fonts.googleapis.com/css`, `/css2`
  and `/icon`, the same API on `fonts.bunny.net`), `rsms.me/inter/inter.css`.
  Blocked on purpose: `cdn.jsdelivr.net/gh|combine|wp`, jsDelivr `/+esm`, esm.sh and Skypack
  (they rewrite modules on the fly; a copy of the package is not what they serve).
* Fonts: Google Fonts CSS is generated from `@fontsource/*` packages: one @font-face per requested
  weight/style that is installed, latin and latin-ext subsets, pointing at
  `https://fonts.gstatic.com/aesenv/<id>/<file>.woff2`, which the mirror also answers. Families
  not installed are left out and named in the label. Icon fonts (Material Icons, Material
  Symbols) get no unicode-range (their ligatures and code points lie outside Latin) and the
  `.material-icons`-style class rule Google's CSS carries, which pages rely on.
* Version: same package, same MAJOR (for 0.x the same MINOR: 0.128 is never served 0.187), or a
  range the catalog says a build also answers (`also_serves`: swiper 11 for 7-10, whose bundle
  and API did not change); among the installed copies that qualify the closest version wins,
  unversioned or `@latest` gets the newest copy installed. A major we do not hold stays
  blocked, as on a CDN that lacks the file. three.js has its own rule, see `_three_order`.
* File: exact path inside the package, then `.min.js`<->`.js`/`.min.css`<->`.css`, extensionless
  -> `.js`, each also under `dist/`; an empty path is the package's CDN entry (`jsdelivr`,
  `unpkg`, `browser`, `main` fields). When the best build lacks the file the next qualifying one
  is tried (unversioned `marked/marked.min.js` is only in marked 4). `..`/`.` segments are
  refused and the resolved file must lie inside the package directory.
"""

from __future__ import annotations

import json
import logging
import mimetypes
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, Field

from aesenv import paths
from aesenv.node.catalog import Catalog, load_catalog
from aesenv.render.models import RequestEntry, RequestOutcome

log = logging.getLogger(__name__)

__all__ = ["LIBRARIES", "RULES", "Library", "LibraryUsage", "VendorMirror", "libraries_from", "library_usage",
           "parse_url"]

FONT_FILE_ORIGIN = "https://fonts.gstatic.com/aesenv"
FONT_SUBSETS = ("latin-ext", "latin")  # what a Latin-script page needs; Google's CSS lists -ext first

Version = tuple[int, int, int]


# ---------------------------------------------------------------------------------------------
# versions


@dataclass(frozen=True)
class VersionSpec:
    """A requested version reduced to what matching needs; None parts were not given."""

    major: int | None = None
    minor: int | None = None
    patch: int | None = None

    @property
    def any(self) -> bool:
        return self.major is None

    def as_tuple(self) -> Version:
        return (self.major or 0, self.minor or 0, self.patch or 0)


_SPEC_RE = re.compile(r"^[\^~=<>v\s]*(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?")


def parse_spec(spec: str) -> VersionSpec:
    """'4', '^4.4.0', '4.x', 'v4', 'r128' (three.js release = 0.128), '' / 'latest' (any)."""
    spec = unquote(spec or "").strip()
    if m := re.fullmatch(r"r(\d+)", spec):
        return VersionSpec(0, int(m.group(1)))
    m = _SPEC_RE.match(spec)
    if not m:
        return VersionSpec()  # dist-tags such as latest/next: whatever we have
    nums = [int(g) if g and g.isdigit() else None for g in m.groups()]
    return VersionSpec(nums[0], nums[1], nums[2] if nums[1] is not None else None)


def parse_version(text: str) -> Version:
    parts = [int(p) for p in re.findall(r"\d+", text.split("-", 1)[0])[:3]]
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# installed packages and the policy for choosing among them


@dataclass(frozen=True)
class Build:
    """One installed copy of a package (an npm alias such as `three-0128` is its own build)."""

    name: str
    version: Version
    version_text: str
    root: Path
    manifest: dict = field(compare=False, hash=False, repr=False)

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version_text}"


Policy = Callable[[VersionSpec, str, Sequence[Build]], list[Build]]


def _closest(req: VersionSpec, builds: Iterable[Build]) -> list[Build]:
    """Closest version first; unversioned requests get the newest first."""
    builds = list(builds)
    if req.any:
        return sorted(builds, key=lambda b: b.version, reverse=True)
    want = req.as_tuple()
    return sorted(builds, key=lambda b: (tuple(abs(x - y) for x, y in zip(b.version, want)),
                                         tuple(-v for v in b.version)))


def same_major(req: VersionSpec, path: str, builds: Sequence[Build]) -> list[Build]:
    """Semver compatibility: same major, and same minor for 0.x (where minors break)."""
    if req.any:
        return _closest(req, builds)
    ok = [b for b in builds if b.version[0] == req.major
          and (req.major != 0 or req.minor is None or b.version[1] == req.minor)]
    return _closest(req, ok)


def any_version(req: VersionSpec, path: str, builds: Sequence[Build]) -> list[Build]:
    """For libraries whose browser API has not changed across releases (lucide's createIcons)."""
    return _closest(req, builds)


_THREE_UMD = (  # (path pattern, first release WITHOUT the file)
    (re.compile(r"(^|/)three(\.min)?\.js$"), (0, 160, 0)),   # build/three(.min).js: removed in r160
    (re.compile(r"(^|/)examples/js/"), (0, 148, 0)),          # examples/js: removed in r148
)
_THREE_MODULE_SPLIT = (0, 150, 0)


def _three_order(req: VersionSpec, path: str, builds: Sequence[Build]) -> list[Build]:
    """three.js: every 0.x minor is a release, so the generic 0.x rule would serve almost nothing.

    * UMD files (`build/three(.min).js`, `examples/js/...`) are served from the newest installed
      release that still shipped them (our r128), for any request older than the release that
      removed them (r160 for the build, r148 for examples/js); a newer request stays blocked,
      as it 404s on the real CDN.
    * Module files (`build/three.module.js`, `examples/jsm/...`, anything else): a request below
      r150 gets the old release (r128 has both), r150 and later or unversioned get the current one.
    """
    for pattern, removed_in in _THREE_UMD:
        if pattern.search(path):
            if not req.any and req.as_tuple() >= removed_in:
                return []
            return _closest(VersionSpec(), [b for b in builds if b.version < removed_in])
    if not req.any and req.as_tuple() < _THREE_MODULE_SPLIT:
        return _closest(req, [b for b in builds if b.version < _THREE_MODULE_SPLIT])
    return _closest(VersionSpec(), [b for b in builds if b.version >= _THREE_MODULE_SPLIT])


@dataclass(frozen=True)
class Library:
    """A library the mirror may serve: npm name, its cdnjs names and where cdnjs' flat files live.

    `held` are the versions the catalog installs; `also` the extra ranges a build answers, as
    (build version, lowest requested, first requested version not answered).
    """

    npm: str
    cdnjs: tuple[str, ...] = ()
    cdnjs_dirs: tuple[str, ...] = ("",)
    policy: Policy = same_major
    held: tuple[Version, ...] = ()
    also: tuple[tuple[Version, Version, Version], ...] = ()

    def order(self, req: VersionSpec, path: str, builds: Sequence[Build]) -> list[Build]:
        """The installed builds that may answer `req`, best first: the policy's choice, then the
        builds whose `also_serves` range holds the requested version."""
        ordered = self.policy(req, path, builds)
        if req.any or not self.also:
            return ordered
        want = req.as_tuple()
        extra = [b for b in builds if b not in ordered
                 and any(b.version == v and lo <= want < hi for v, lo, hi in self.also)]
        return ordered + _closest(req, extra)

    def may_answer(self, spec: str) -> bool:
        """Whether a build the catalog installs may answer this requested version (decided from
        the catalog alone, so that URL parsing does not depend on what is installed)."""
        held = [Build(self.npm, v, "", Path("."), {}) for v in self.held]
        return bool(self.order(parse_spec(spec), "", held))


_POLICIES: dict[str, Policy] = {"same-major": same_major, "any": any_version, "three": _three_order}


def libraries_from(catalog: Catalog) -> tuple[Library, ...]:
    """The catalog's libraries as the mirror's `Library` objects."""
    out = []
    for entry in catalog.libraries:
        also = tuple((parse_version(b.version), parse_spec(b.also_serves.min).as_tuple(),
                      parse_spec(b.also_serves.below).as_tuple()) for b in entry.builds if b.also_serves)
        out.append(Library(entry.npm, tuple(entry.cdnjs), tuple(entry.cdnjs_dirs), _POLICIES[entry.policy],
                           tuple(parse_version(b.version) for b in entry.builds), also))
    return tuple(out)


def _by_cdnjs_name(libraries: Iterable[Library]) -> dict[str, tuple[Library, ...]]:
    """cdnjs name (lower case) -> the libraries published under it, in catalog order."""
    out: dict[str, tuple[Library, ...]] = {}
    for lib in libraries:
        for name in dict.fromkeys(n.lower() for n in lib.cdnjs):
            out[name] = out.get(name, ()) + (lib,)
    return out


LIBRARIES: tuple[Library, ...] = libraries_from(load_catalog())
_BY_NPM = {lib.npm: lib for lib in LIBRARIES}
_BY_CDNJS = _by_cdnjs_name(LIBRARIES)


# ---------------------------------------------------------------------------------------------
# what a URL asks for


@dataclass(frozen=True)
class PackageAsk:
    name: str                      # npm name (as far as the URL tells)
    spec: str = ""                 # version as written; "" = unversioned
    path: str = ""                 # file inside the package; "" = its CDN entry
    dirs: tuple[str, ...] = ("",)  # where to look for `path` (cdnjs keeps files flat)
    module: bool = False           # unpkg ?module: rewrite bare imports to unpkg URLs
    variant: str = ""              # key into _VARIANTS (a compatibility prelude)
    shown: str = ""                # what the page asked for, when it is not `name@spec`

    @property
    def requested(self) -> str:
        return self.shown or f"{self.name}@{self.spec or 'latest'}"


@dataclass(frozen=True)
class FamilyAsk:
    family: str
    faces: tuple[tuple[str, int, int], ...]  # (style, lowest weight, highest weight)


@dataclass(frozen=True)
class FontCssAsk:
    families: tuple[FamilyAsk, ...]
    display: str = ""
    source: str = "google-fonts"


@dataclass(frozen=True)
class FontFileAsk:
    package: str  # fontsource id, e.g. "inter"
    file: str


Ask = PackageAsk | FontCssAsk | FontFileAsk

_NAME_RE = re.compile(r"^(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*$", re.I)


def _split_package(rest: str) -> tuple[str, str, str] | None:
    """'@scope/name@ver/a/b.js' -> ('@scope/name', 'ver', 'a/b.js')."""
    parts = rest.split("/")
    n = 2 if rest.startswith("@") else 1
    if len(parts) < n:
        return None
    head, path = "/".join(parts[:n]), "/".join(parts[n:])
    if head.startswith("@"):
        name, _, spec = head[1:].partition("@")
        name = "@" + name
    else:
        name, _, spec = head.partition("@")
    if not _NAME_RE.match(name):
        return None
    return name, spec, path


class Rule(Protocol):
    """One URL shape. `parse` says what the URL asks for, or None when it is not this shape."""

    hosts: tuple[str, ...]

    def parse(self, path: str, query: dict[str, list[str]]) -> Ask | None: ...


class TailwindPlayRule:
    """cdn.tailwindcss.com is Tailwind v3's play script, which is not published on npm.

    We serve `@tailwindcss/browser` (v4, same idea: compiles the page's classes in the browser)
    with a prelude that accepts v3's `tailwind.config = {...}` and maps its common theme keys to a
    v4 `@theme`. `?plugins=forms,typography` cannot be honoured (the v4 browser build has no
    plugins); container-queries, aspect-ratio and line-clamp are built into v4.
    """

    hosts = ("cdn.tailwindcss.com",)

    def parse(self, path, query):
        return PackageAsk("@tailwindcss/browser", variant="tailwind-v3-play",
                          shown="tailwindcss@3 play-CDN")


class JsDelivrRule:
    hosts = ("cdn.jsdelivr.net", "fastly.jsdelivr.net", "gcore.jsdelivr.net")

    def parse(self, path, query):
        if not path.startswith("/npm/"):
            return None  # /gh/, /combine/, /wp/: not npm packages
        split = _split_package(path[len("/npm/"):])
        return PackageAsk(*split) if split else None


class UnpkgRule:
    hosts = ("unpkg.com", "www.unpkg.com")

    def parse(self, path, query):
        if path.startswith("/browse/"):
            return None
        split = _split_package(path[1:])
        return PackageAsk(*split, module="module" in query) if split else None


class JspmRule:
    hosts = ("ga.jspm.io", "jspm.dev")

    def parse(self, path, query):
        if not path.startswith("/npm:"):
            return None
        split = _split_package(path[len("/npm:"):])
        return PackageAsk(*split) if split else None


def _cdnjs_ask(name: str, spec: str, path: str) -> PackageAsk:
    """A cdnjs-style (name, version, flat file) request as an npm package request."""
    libs = _BY_CDNJS.get(name.lower())
    if not libs:
        return PackageAsk(name.lower(), spec, path)
    lib = next((lib for lib in libs if lib.may_answer(spec)), libs[0])
    return PackageAsk(lib.npm, spec, path, dirs=lib.cdnjs_dirs, shown=f"{lib.npm}@{spec}")


class CdnjsRule:
    hosts = ("cdnjs.cloudflare.com",)

    def parse(self, path, query):
        m = re.match(r"^/ajax/libs/([^/]+)/([^/]+)/(.+)$", path)
        return _cdnjs_ask(m.group(1), m.group(2), m.group(3)) if m else None


class BootstrapCdnRule:
    """BootstrapCDN (`maxcdn.bootstrapcdn.com/bootstrap/4.5.2/css/bootstrap.min.css`,
    `/font-awesome/4.7.0/...`): the names and layout cdnjs uses."""

    hosts = ("maxcdn.bootstrapcdn.com", "stackpath.bootstrapcdn.com", "netdna.bootstrapcdn.com")

    def parse(self, path, query):
        m = re.match(r"^/(bootstrap|font-awesome)/([^/]+)/(.+)$", path)
        return _cdnjs_ask(m.group(1), m.group(2), m.group(3)) if m else None


class FontAwesomeReleasesRule:
    """use.fontawesome.com/releases/v5.15.4/css/all.css: the npm package's own layout."""

    hosts = ("use.fontawesome.com",)

    def parse(self, path, query):
        m = re.match(r"^/releases/v(\d[^/]*)/(.+)$", path)
        return PackageAsk("@fortawesome/fontawesome-free", m.group(1), m.group(2)) if m else None


class PlotlyCdnRule:
    """cdn.plot.ly/plotly-2.27.0.min.js. A partial bundle (plotly-basic-..., -cartesian-...) gets
    the full bundle, which has the same API and every trace type; `plotly-latest` has been frozen
    at 1.58.5 on the real CDN since v2, so it asks for that."""

    hosts = ("cdn.plot.ly",)

    def parse(self, path, query):
        m = re.match(r"^/plotly(?:-(?:basic|cartesian|geo|gl2d|gl3d|mapbox|finance|strict))?"
                     r"-(latest|\d+\.\d+\.\d+)(?:\.min)?\.js$", path)
        if not m:
            return None
        version = "1.58.5" if m.group(1) == "latest" else m.group(1)
        return PackageAsk("plotly.js-dist-min", version, "plotly.min.js", shown=f"plotly.js@{m.group(1)}")


class JQueryRule:
    hosts = ("code.jquery.com",)

    def parse(self, path, query):
        m = re.match(r"^/jquery-(\d+\.\d+\.\d+|latest)((?:\.slim)?(?:\.min)?\.js)$", path)
        if not m:
            return None
        version = "1.11.1" if m.group(1) == "latest" else m.group(1)  # jquery-latest was frozen at 1.11.1
        return PackageAsk("jquery", version, "jquery" + m.group(2), dirs=("dist",))


class D3OrgRule:
    hosts = ("d3js.org",)

    def parse(self, path, query):
        m = re.match(r"^/d3\.v(\d+)((?:\.min)?\.js)$", path)
        return PackageAsk("d3", m.group(1), "d3" + m.group(2), dirs=("dist",)) if m else None


class GoogleFontsRule:
    """Google Fonts CSS API v1 (`css?family=A:400,700i|B`), v2 (`css2?family=A:ital,wght@0,400;1,700`)
    and the icon endpoint (`icon?family=Material+Icons|Material+Icons+Outlined`), which takes v1's
    family list."""

    hosts = ("fonts.googleapis.com", "fonts.bunny.net")

    def parse(self, path, query):
        if path.rstrip("/") not in ("/css", "/css2", "/icon"):
            return None
        families = []
        for value in query.get("family", []):
            for item in value.split("|"):
                if fam := _parse_family(item):
                    families.append(fam)
        if not families:
            return None
        return FontCssAsk(tuple(families), display=(query.get("display") or [""])[0])


class RsmsInterRule:
    """rsms.me/inter/inter.css: the Inter author's own CSS, often used instead of Google Fonts."""

    hosts = ("rsms.me",)

    def parse(self, path, query):
        if path != "/inter/inter.css":
            return None
        faces = (("normal", 100, 900), ("italic", 100, 900))
        return FontCssAsk(tuple(FamilyAsk(f, faces) for f in ("Inter", "InterVariable", "Inter var")),
                          display="swap", source="rsms.me")


class FontFileRule:
    """The woff2 files our generated font CSS points at."""

    hosts = ("fonts.gstatic.com",)

    def parse(self, path, query):
        m = re.match(r"^/aesenv/([a-z0-9-]+)/([a-z0-9-]+\.woff2?)$", path)
        return FontFileAsk(m.group(1), m.group(2)) if m else None


RULES: tuple[Rule, ...] = (TailwindPlayRule(), JsDelivrRule(), UnpkgRule(), JspmRule(), CdnjsRule(),
                           BootstrapCdnRule(), FontAwesomeReleasesRule(), PlotlyCdnRule(), JQueryRule(),
                           D3OrgRule(), GoogleFontsRule(), RsmsInterRule(), FontFileRule())
_RULE_BY_HOST = {host: rule for rule in RULES for host in rule.hosts}


def parse_url(url: str) -> Ask | None:
    """What a URL asks the mirror for, or None when it is not a CDN shape we know."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return None
    rule = _RULE_BY_HOST.get(parts.hostname.lower())
    if rule is None:
        return None
    return rule.parse(parts.path, parse_qs(parts.query, keep_blank_values=True))


_V1_TOKEN = re.compile(r"(\d{3})?(regular|r|bolditalic|bi|bold|b|italic|i)?")


def _parse_family(item: str) -> FamilyAsk | None:
    name, _, spec = item.partition(":")
    name = " ".join(name.split())
    if not name:
        return None
    if "@" in spec:  # css2: axes@tuple;tuple
        axes_text, _, tuples = spec.partition("@")
        axes = [a.strip().lower() for a in axes_text.split(",")]
        faces = []
        for tup in tuples.split(";"):
            values = dict(zip(axes, tup.split(",")))
            ital = values.get("ital", "0")
            styles = {"0": ("normal",), "1": ("italic",)}.get(ital.strip(), ("normal", "italic"))
            lo, _, hi = values.get("wght", "400").partition("..")
            try:
                w_lo, w_hi = int(float(lo)), int(float(hi or lo))
            except ValueError:
                continue
            faces.extend((s, w_lo, w_hi) for s in styles)
        return FamilyAsk(name, tuple(faces))
    if not spec.strip():
        return FamilyAsk(name, (("normal", 400, 400),))
    faces = []
    for token in spec.split(","):
        m = _V1_TOKEN.fullmatch(token.strip().lower())
        if not m or not (m.group(1) or m.group(2)):
            continue
        suffix = m.group(2) or ""
        weight = int(m.group(1)) if m.group(1) else (700 if suffix.startswith("b") else 400)
        style = "italic" if suffix in ("italic", "i", "bolditalic", "bi") else "normal"
        faces.append((style, weight, weight))
    return FamilyAsk(name, tuple(faces or [("normal", 400, 400)]))


# ---------------------------------------------------------------------------------------------
# serving


_TYPES = {
    ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
    ".cjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".json": "application/json", ".map": "application/json", ".woff2": "font/woff2", ".woff": "font/woff",
    ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject", ".svg": "image/svg+xml",
}


def content_type(path: str) -> str:
    suffix = Path(path).suffix.lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"


def _clean_path(path: str) -> list[str] | None:
    """Decoded path segments, or None when the path tries to step outside the package."""
    segments = [s for s in unquote(path).split("/") if s]
    if any(s in (".", "..") or "\\" in s or "\0" in s or ":" in s for s in segments):
        return None
    return segments


def _variants(path: str) -> list[str]:
    """Names a CDN would also answer for this file (auto-minified, extensionless, under dist/)."""
    out = [path]
    for a, b in ((".min.js", ".js"), (".min.css", ".css"), (".min.mjs", ".mjs")):
        if path.endswith(a):
            out.append(path[: -len(a)] + b)
            break
    else:
        for a, b in ((".js", ".min.js"), (".css", ".min.css")):
            if path.endswith(a):
                out.append(path[: -len(a)] + b)
                break
        else:
            if "." not in path.rsplit("/", 1)[-1]:
                out.append(path + ".js")
    return out + ["dist/" + p for p in out if not p.startswith("dist/")]


class _ByteCache:
    """LRU of file bodies, bounded in bytes; files larger than a quarter of it are not kept."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[object, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: object, load: Callable[[], bytes]) -> bytes:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
        body = load()
        if len(body) <= self.max_bytes // 4:
            with self._lock:
                if key not in self._items:
                    self._items[key] = body
                    self._size += len(body)
                while self._size > self.max_bytes:
                    _, old = self._items.popitem(last=False)
                    self._size -= len(old)
        return body


@dataclass(frozen=True)
class FontPackage:
    id: str
    family: str
    version: str
    files: Path
    weights: tuple[int, ...]
    styles: tuple[str, ...]
    ranges: dict = field(compare=False, hash=False, repr=False)

    @property
    def npm(self) -> str:
        return f"@fontsource/{self.id}@{self.version}"

    @property
    def is_icon_font(self) -> bool:
        """Material Icons / Material Symbols: ligature icon fonts, styled through a class."""
        return bool(re.match(r"material(icons|symbols)", _family_key(self.family)))


def _icon_class_rule(family: str, css_name: str) -> str:
    """The class Google's icon-font CSS defines (`.material-icons`, `.material-symbols-outlined`):
    pages write `<span class="material-icons">home</span>` and rely on it for the font, the size
    and the ligatures that turn the word into the glyph."""
    cls = re.sub(r"[^a-z0-9]+", "-", family.lower()).strip("-")
    return (f".{cls} {{\n  font-family: '{css_name}';\n  font-weight: normal;\n  font-style: normal;\n"
            "  font-size: 24px;\n  line-height: 1;\n  letter-spacing: normal;\n  text-transform: none;\n"
            "  display: inline-block;\n  white-space: nowrap;\n  word-wrap: normal;\n  direction: ltr;\n"
            "  -webkit-font-feature-settings: 'liga';\n  font-feature-settings: 'liga';\n"
            "  -webkit-font-smoothing: antialiased;\n}\n")


_FAMILY_ALIASES = {"sourcesanspro": "sourcesans3", "intervar": "inter", "intervariable": "inter"}


def _family_key(name: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    return _FAMILY_ALIASES.get(key, key)


_BARE_IMPORT = re.compile(r"""(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])([^"'./][^"':]*)\2""")

_TAILWIND_V3_PRELUDE = r"""/* aesenv: cdn.tailwindcss.com (Tailwind v3 play CDN) served by @tailwindcss/browser v4.
   Accepts v3's `tailwind.config = {...}` and maps common theme keys onto a v4 @theme. */
(function () {
  if (window.tailwind && window.tailwind.__aesenv) return;
  var NS = {colors: "color", fontFamily: "font", borderRadius: "radius", boxShadow: "shadow",
            spacing: "spacing", screens: "breakpoint", animation: "animate", fontSize: "text",
            letterSpacing: "tracking", lineHeight: "leading", maxWidth: "container",
            blur: "blur", dropShadow: "drop-shadow", fontWeight: "font-weight"};
  var kebab = function (s) { return String(s).replace(/[A-Z]/g, function (c) { return "-" + c.toLowerCase(); }); };
  var value = function (v) {
    if (Array.isArray(v)) return v.map(function (x) {
      return /\s/.test(x) && !/^['"]/.test(x) ? '"' + x + '"' : x;
    }).join(", ");
    return String(v).replace(/<alpha-value>/g, "1");
  };
  function vars(prefix, obj, key, out) {
    if (obj == null || typeof obj === "function") return;
    if (key === "fontSize" && Array.isArray(obj)) {
      out.push("--" + prefix + ": " + obj[0] + ";");
      var lh = typeof obj[1] === "object" ? obj[1] && obj[1].lineHeight : obj[1];
      if (lh) out.push("--" + prefix + "--line-height: " + lh + ";");
      return;
    }
    if (typeof obj !== "object" || Array.isArray(obj)) { out.push("--" + prefix + ": " + value(obj) + ";"); return; }
    for (var k in obj) vars(k === "DEFAULT" ? prefix : prefix + "-" + k, obj[k], key, out);
  }
  function keyframes(all) {
    var css = "";
    for (var name in all) {
      css += "@keyframes " + name + " {";
      for (var step in all[name]) {
        css += step + " {";
        for (var prop in all[name][step]) css += kebab(prop) + ": " + all[name][step][prop] + ";";
        css += "}";
      }
      css += "}\n";
    }
    return css;
  }
  function toCss(cfg) {
    var theme = cfg.theme || {}, out = [], frames = "";
    [theme, theme.extend || {}].forEach(function (t) {
      for (var key in NS) if (t[key]) for (var k in t[key]) vars(NS[key] + "-" + k, t[key][k], key, out);
      if (t.keyframes) frames += keyframes(t.keyframes);
    });
    var css = out.length || frames ? "@theme {\n" + out.join("\n") + "\n" + frames + "}\n" : "";
    var dark = Array.isArray(cfg.darkMode) ? cfg.darkMode[0] : cfg.darkMode;
    if (dark === "class" || dark === "selector") css += "@custom-variant dark (&:where(.dark, .dark *));\n";
    return css;
  }
  var config = {}, style = null;
  function apply() {
    var css = "";
    try { css = toCss(config || {}); } catch (e) { console.warn("aesenv tailwind config shim:", e); }
    if (!style) {
      if (!css) return;
      style = document.createElement("style");
      style.setAttribute("type", "text/tailwindcss");
      (document.head || document.documentElement).appendChild(style);
    }
    style.textContent = css;
  }
  window.tailwind = {__aesenv: true,
    get config() { return config; },
    set config(v) { config = v || {}; apply(); }};
})();
"""

_VARIANTS: dict[str, bytes] = {"tailwind-v3-play": _TAILWIND_V3_PRELUDE.encode()}


class LibraryUsage(BaseModel):
    """Which CDN libraries a page asked for and which the mirror served."""

    libraries_requested: list[str] = Field(default_factory=list)  # as asked: name@spec, font:Family
    libraries_served: list[str] = Field(default_factory=list)     # what was served: name@version
    blocked: list[str] = Field(default_factory=list)              # asked for and not served
    blocked_urls: list[str] = Field(default_factory=list)         # every blocked request


class VendorMirror:
    """AssetResolver over an installed node_modules. Thread-safe; file bodies cached (LRU)."""

    @staticmethod
    def summarize(requests: Iterable[RequestEntry]) -> "LibraryUsage":
        """Same as `library_usage`: which libraries a rendering asked for, got, and was refused."""
        return library_usage(requests)

    def __init__(self, node_modules: Path | str, cache_bytes: int = 96 * 1024 * 1024) -> None:
        self.root = Path(node_modules)
        self.builds: dict[str, list[Build]] = {}
        self.fonts: dict[str, FontPackage] = {}
        self._cache = _ByteCache(cache_bytes)
        if self.root.is_dir():
            self._scan()

    @classmethod
    def default(cls) -> "VendorMirror":
        """The mirror `aesenv setup` installs (AESENV_HOME/node/node_modules); `available` is
        False, and every request stays blocked, when it has not been installed."""
        return cls(paths.node_dir() / "node_modules")

    @property
    def available(self) -> bool:
        return bool(self.builds or self.fonts)

    @property
    def versions(self) -> dict[str, list[str]]:
        """Installed libraries and fonts, for render provenance."""
        out = {name: sorted((b.version_text for b in builds), key=parse_version)
               for name, builds in sorted(self.builds.items())}
        out.update({f"@fontsource/{f.id}": [f.version] for f in sorted(self.fonts.values(), key=lambda f: f.id)})
        return out

    # -- discovery ------------------------------------------------------------------------

    def _scan(self) -> None:
        dirs = []
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("@") and entry.is_dir():
                dirs.extend(sorted(p for p in entry.iterdir() if p.is_dir()))
            elif entry.is_dir() and not entry.name.startswith("."):
                dirs.append(entry)
        for pkg_dir in dirs:
            try:
                manifest = json.loads((pkg_dir / "package.json").read_text())
            except (OSError, ValueError):
                continue
            name, version = manifest.get("name", ""), str(manifest.get("version", ""))
            if name in _BY_NPM:
                build = Build(name, parse_version(version), version, pkg_dir.resolve(), manifest)
                self.builds.setdefault(name, []).append(build)
            elif name.startswith("@fontsource/"):
                self._add_font(pkg_dir, version)

    def _add_font(self, pkg_dir: Path, version: str) -> None:
        try:
            meta = json.loads((pkg_dir / "metadata.json").read_text())
            ranges = json.loads((pkg_dir / "unicode.json").read_text())
        except (OSError, ValueError):
            return
        font = FontPackage(meta["id"], meta["family"], version, (pkg_dir / "files").resolve(),
                           tuple(meta.get("weights", [])), tuple(meta.get("styles", [])), ranges)
        self.fonts[_family_key(font.family)] = font

    # -- AssetResolver --------------------------------------------------------------------

    def resolve(self, url: str) -> tuple[bytes, str, str] | None:
        """(body, content type, label) for a CDN URL we hold, else None (the request stays blocked)."""
        if not self.available:
            return None
        ask = parse_url(url)
        if ask is None:
            return None
        try:
            return self._serve[type(ask)](self, ask)
        except (OSError, ValueError, UnicodeError) as exc:  # a broken install must not break the render
            log.warning("vendor mirror could not serve %s: %s", url[:300], exc)
            return None

    def _read(self, key: object, path: Path) -> bytes:
        return self._cache.get(key, path.read_bytes)

    def _locate(self, build: Build, ask: PackageAsk) -> tuple[Path, str] | None:
        segments = _clean_path(ask.path)
        if segments is None:
            return None
        rel = "/".join(segments)
        if rel:
            candidates = [f"{d}/{v}" for d in ask.dirs for v in _variants(rel)]
        else:
            m = build.manifest
            fields = ("module", "main") if ask.module else ("jsdelivr", "unpkg", "browser", "main")
            candidates = [m[f] for f in fields if isinstance(m.get(f), str)] + ["index.js"]
        for cand in candidates:
            parts = _clean_path(cand.removeprefix("./"))
            if not parts:
                continue
            target = build.root.joinpath(*parts).resolve()
            if target.is_file() and target.is_relative_to(build.root):
                return target, target.relative_to(build.root).as_posix()
        return None

    def _choose(self, ask: PackageAsk) -> tuple[Build, Path, str] | None:
        builds = self.builds.get(ask.name)
        if not builds:
            return None
        req = parse_spec(ask.spec)
        for build in _BY_NPM[ask.name].order(req, _clean_path_text(ask.path), builds):
            if found := self._locate(build, ask):
                return build, *found
        return None

    def _serve_package(self, ask: PackageAsk) -> tuple[bytes, str, str] | None:
        chosen = self._choose(ask)
        if chosen is None:
            return None
        build, path, rel = chosen
        ctype = content_type(rel)
        if ask.module and ctype.startswith("text/javascript"):
            body = self._cache.get(("module", path, ask.spec),
                                   lambda: self._rewrite_bare(path.read_bytes(), build, ask))
        elif ask.variant:
            body = self._cache.get((ask.variant, path), lambda: _VARIANTS[ask.variant] + path.read_bytes())
        else:
            body = self._read(path, path)
        return body, ctype, f"{build.id} {rel} (requested {ask.requested})"

    def _rewrite_bare(self, body: bytes, build: Build, ask: PackageAsk) -> bytes:
        """unpkg's ?module: bare specifiers become unpkg URLs, which this mirror also answers."""
        deps = {**build.manifest.get("peerDependencies", {}), **build.manifest.get("dependencies", {})}

        def url_for(spec: str) -> str:
            parts = spec.split("/")
            n = 2 if spec.startswith("@") else 1
            name, sub = "/".join(parts[:n]), "/".join(parts[n:])
            version = (ask.spec or build.version_text) if name == build.name else str(deps.get(name, ""))
            version = version if re.fullmatch(r"[\w.^~*-]+", version) else ""
            target = self._entry_path(name, version, sub)
            return f"https://unpkg.com/{name}{'@' + version if version else ''}/{target}?module".replace("/?", "?")

        text = body.decode("utf-8", "surrogateescape")
        text = _BARE_IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}{url_for(m.group(3))}{m.group(2)}", text)
        return text.encode("utf-8", "surrogateescape")

    def _entry_path(self, name: str, version: str, sub: str) -> str:
        """The file a bare `name/sub` import means (package `exports`, then `module`), so that the
        rewritten URL equals the one the page itself uses and the module is loaded once."""
        builds = self.builds.get(name)
        if not builds:
            return sub
        ordered = _BY_NPM[name].order(parse_spec(version), sub, builds) or builds
        manifest = ordered[0].manifest
        exports = manifest.get("exports")
        key = "./" + sub if sub else "."
        if isinstance(exports, dict):
            for pattern, target in exports.items():
                if isinstance(target, dict):
                    target = target.get("import") or target.get("default")
                if not isinstance(target, str):
                    continue
                if pattern == key:
                    return target.lstrip("./")
                if pattern.endswith("*") and key.startswith(pattern[:-1]):
                    return target.replace("*", key[len(pattern) - 1:]).lstrip("./")
        if not sub and isinstance(manifest.get("module"), str):
            return manifest["module"].lstrip("./")
        return sub

    def _serve_font_css(self, ask: FontCssAsk) -> tuple[bytes, str, str] | None:
        rules, served, missing = [], [], []
        for fam in ask.families:
            font = self.fonts.get(_family_key(fam.family))
            if font is None:
                missing.append(fam.family)
                continue
            faces = sorted({(style, w) for style, lo, hi in fam.faces if style in font.styles
                            for w in font.weights if lo <= w <= hi}, key=lambda f: (f[0] != "normal", f[1]))
            if not faces:
                missing.append(f"{fam.family} ({' '.join(f'{s}:{lo}-{hi}' for s, lo, hi in fam.faces)})")
                continue
            css_name = re.sub(r"[^\w \-]", "", fam.family)  # the page's own spelling, nothing that ends a string
            icons = font.is_icon_font
            for style, weight in faces:
                for subset in FONT_SUBSETS:
                    file = f"{font.id}-{subset}-{weight}-{style}.woff2"
                    if subset not in font.ranges or not (font.files / file).is_file():
                        continue
                    display = f"  font-display: {ask.display};\n" if re.fullmatch(r"[a-z]+", ask.display) else ""
                    scope = "" if icons else f"  unicode-range: {font.ranges[subset]};\n"
                    rules.append(
                        f"/* {subset} */\n@font-face {{\n  font-family: '{css_name}';\n  font-style: {style};\n"
                        f"  font-weight: {weight};\n{display}  src: url({FONT_FILE_ORIGIN}/{font.id}/{file}) "
                        f"format('woff2');\n{scope}}}\n")
            if icons:
                rules.append(_icon_class_rule(font.family, css_name))
            served.append(font.npm)
        if not rules:
            return None
        asked = ", ".join(f.family for f in ask.families)
        note = f"; missing {', '.join(missing)}" if missing else ""
        label = f"{','.join(dict.fromkeys(served))} fonts.css (requested {ask.source}: {asked}{note})"
        return "".join(rules).encode(), "text/css; charset=utf-8", label

    def _serve_font_file(self, ask: FontFileAsk) -> tuple[bytes, str, str] | None:
        font = next((f for f in self.fonts.values() if f.id == ask.package), None)
        if font is None:
            return None
        target = (font.files / ask.file).resolve()
        if not (target.is_file() and target.is_relative_to(font.files)):
            return None
        label = f"{font.npm} files/{ask.file} (requested font file)"
        return self._read(target, target), content_type(ask.file), label

    _serve = {PackageAsk: _serve_package, FontCssAsk: _serve_font_css, FontFileAsk: _serve_font_file}


def _clean_path_text(path: str) -> str:
    segments = _clean_path(path)
    return "/".join(segments) if segments else ""


def _asked_ids(ask: Ask) -> list[str]:
    if isinstance(ask, PackageAsk):
        return [ask.requested]
    if isinstance(ask, FontCssAsk):
        return [f"font:{f.family}" for f in ask.families]
    return []  # font files follow from a font CSS request


def library_usage(requests: Iterable[RequestEntry]) -> LibraryUsage:
    """Summarize a rendering's requests: libraries asked for, served (from labels), blocked."""
    requested: dict[str, None] = {}
    served: dict[str, None] = {}
    blocked: dict[str, None] = {}
    blocked_urls: list[str] = []
    for req in requests:
        ask = parse_url(req.url)
        ids = _asked_ids(ask) if ask is not None else []
        requested.update(dict.fromkeys(ids))
        if req.outcome is RequestOutcome.SERVED_LOCAL:
            served.update(dict.fromkeys(i for i in req.detail.split(" ", 1)[0].split(",") if i))
        elif req.outcome is RequestOutcome.BLOCKED:
            blocked.update(dict.fromkeys(ids))
            blocked_urls.append(req.url)
    return LibraryUsage(libraries_requested=list(requested), libraries_served=list(served),
                        blocked=list(blocked), blocked_urls=blocked_urls)
