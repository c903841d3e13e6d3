"""The vendored CDN mirror: URL shapes, version matching, path safety, font CSS, and real renders.

Unit tests run on a tiny fake node_modules (no npm needed); the URL tables and the end-to-end
renders use the mirror `aesenv setup` installs and are skipped when it is not there.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from aesenv.render import RequestOutcome
from aesenv.render.models import RequestEntry
from aesenv.render.vendor import (Build, FontCssAsk, PackageAsk, VendorMirror, VersionSpec, _ByteCache,
                                  library_usage, parse_spec, parse_url, same_major)
from support.dom import element_by_id

REAL = VendorMirror.default()
needs_mirror = pytest.mark.skipif(not REAL.available, reason="vendored mirror not installed: run `aesenv setup`")


# ---------------------------------------------------------------------------------------------
# a fake node_modules, so the rules are tested without npm


def _package(root: Path, dirname: str, manifest: dict, files: dict[str, str | bytes]) -> None:
    pkg = root / dirname
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps(manifest))
    for rel, body in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_bytes(body if isinstance(body, bytes) else body.encode())


@pytest.fixture()
def fake(tmp_path) -> VendorMirror:
    nm = tmp_path / "node_modules"
    _package(nm, "three-0128", {"name": "three", "version": "0.128.0", "main": "build/three.js",
                                "module": "build/three.module.js"},
             {"build/three.js": "/*r128 full*/", "build/three.min.js": "/*r128*/",
              "build/three.module.js": "export const REVISION='128';",
              "examples/js/controls/OrbitControls.js": "THREE.OrbitControls=1;",
              "examples/jsm/controls/OrbitControls.js": "import { Vector3 } from 'three';"})
    _package(nm, "three", {"name": "three", "version": "0.187.0", "main": "./build/three.cjs",
                           "module": "./build/three.module.js",
                           "exports": {".": {"import": "./build/three.module.js"}, "./addons/*": "./examples/jsm/*"}},
             {"build/three.cjs": "module.exports={}", "build/three.module.js": "export * from './three.core.js';",
              "build/three.core.js": "export const REVISION='187';",
              "examples/jsm/controls/OrbitControls.js":
                  "import { Vector3 } from 'three';\nimport { X } from \"three/addons/math/X.js\";\n"
                  "import { Y } from './Y.js';\nimport('three').then(() => 0);"})
    _package(nm, "chart.js", {"name": "chart.js", "version": "4.6.1", "jsdelivr": "./dist/chart.umd.min.js",
                              "main": "./dist/chart.cjs"},
             {"dist/chart.umd.min.js": "/*chart4 min*/", "dist/chart.umd.js": "/*chart4*/", "dist/chart.cjs": ""})
    _package(nm, "@fortawesome/fontawesome-free", {"name": "@fortawesome/fontawesome-free", "version": "6.7.2"},
             {"css/all.min.css": ".fa{}", "webfonts/fa-solid-900.woff2": b"wOF2", "svgs/solid/house.svg": "<svg/>"})
    _package(nm, "@tailwindcss/browser", {"name": "@tailwindcss/browser", "version": "4.3.4",
                                          "main": "./dist/index.global.js"},
             {"dist/index.global.js": "/*tw4*/"})
    _package(nm, "left-pad", {"name": "left-pad", "version": "1.3.0", "main": "index.js"}, {"index.js": "x"})
    font = nm / "@fontsource" / "inter"
    _package(nm, "@fontsource/inter", {"name": "@fontsource/inter", "version": "5.3.0"}, {})
    (font / "metadata.json").write_text(json.dumps({"id": "inter", "family": "Inter", "weights": [400, 700],
                                                    "styles": ["normal", "italic"], "subsets": ["latin", "latin-ext"]}))
    (font / "unicode.json").write_text(json.dumps({"latin": "U+0000-00FF", "latin-ext": "U+0100-024F",
                                                   "cyrillic": "U+0400-045F"}))
    (font / "files").mkdir()
    for w in (400, 700):
        for style in ("normal", "italic"):
            for subset in ("latin", "latin-ext", "cyrillic"):
                (font / "files" / f"inter-{subset}-{w}-{style}.woff2").write_bytes(b"wOF2" + bytes([w // 100]))
    (tmp_path / "secret.txt").write_text("secret")
    return VendorMirror(nm)


def served(mirror: VendorMirror, url: str) -> str | None:
    """The served `name@version file` of a URL, or None when it stays blocked."""
    hit = mirror.resolve(url)
    return hit[2].split(" (requested", 1)[0] if hit else None


# ---------------------------------------------------------------------------------------------
# URL shapes


@pytest.mark.parametrize("url, name, spec, path", [
    ("https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js", "three", "0.160.0", "build/three.module.js"),
    ("https://cdn.jsdelivr.net/npm/chart.js", "chart.js", "", ""),
    ("https://cdn.jsdelivr.net/npm/@tailwindcss/browser@4", "@tailwindcss/browser", "4", ""),
    ("https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@6.5.1/css/all.min.css",
     "@fortawesome/fontawesome-free", "6.5.1", "css/all.min.css"),
    ("https://unpkg.com/react@18/umd/react.production.min.js", "react", "18", "umd/react.production.min.js"),
    ("https://unpkg.com/@babel/standalone/babel.min.js", "@babel/standalone", "", "babel.min.js"),
    ("https://unpkg.com/lucide@latest", "lucide", "latest", ""),
    ("https://ga.jspm.io/npm:three@0.160.0/build/three.module.js", "three", "0.160.0", "build/three.module.js"),
    ("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js", "three", "r128", "three.min.js"),
    ("https://cdnjs.cloudflare.com/ajax/libs/Chart.js/4.4.1/chart.umd.min.js", "chart.js", "4.4.1", "chart.umd.min.js"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/webfonts/fa-solid-900.woff2",
     "@fortawesome/fontawesome-free", "6.4.0", "webfonts/fa-solid-900.woff2"),
    ("https://cdnjs.cloudflare.com/ajax/libs/babel-standalone/7.23.5/babel.min.js", "@babel/standalone", "7.23.5",
     "babel.min.js"),
    ("https://cdnjs.cloudflare.com/ajax/libs/aos/2.3.4/aos.js", "aos", "2.3.4", "aos.js"),
    ("https://code.jquery.com/jquery-3.6.0.min.js", "jquery", "3.6.0", "jquery.min.js"),
    ("https://d3js.org/d3.v7.min.js", "d3", "7", "d3.min.js"),
    ("https://cdn.tailwindcss.com/3.4.1?plugins=forms,typography", "@tailwindcss/browser", "", ""),
])
def test_url_shapes_are_parsed(url, name, spec, path):
    ask = parse_url(url)
    assert isinstance(ask, PackageAsk)
    assert (ask.name, ask.spec, ask.path) == (name, spec, path)


@pytest.mark.parametrize("url", [
    "https://cdn.jsdelivr.net/gh/mrdoob/three.js@r128/build/three.min.js",
    "https://cdn.jsdelivr.net/combine/npm/chart.js,npm/d3",
    "https://esm.sh/three@0.160.0",
    "https://cdn.skypack.dev/three",
    "https://unpkg.com/browse/three@0.160.0/",
    "https://example.com/three.min.js",
    "https://fonts.googleapis.com/earlyaccess/notosanssc.css",
    "https://kit.fontawesome.com/0123456789.js",
    "file:///etc/passwd",
    "data:text/javascript,1",
])
def test_unknown_shapes_and_hosts_are_not_parsed(url):
    assert parse_url(url) is None


def test_version_specs():
    assert parse_spec("r128") == VersionSpec(0, 128)
    assert parse_spec("^4.4.0") == VersionSpec(4, 4, 0)
    assert parse_spec("4.x") == VersionSpec(4)
    assert parse_spec("v3") == VersionSpec(3)
    assert parse_spec("latest").any and parse_spec("").any


def test_zero_major_matches_the_minor():
    old = Build("lib", (0, 128, 0), "0.128.0", Path("/x"), {})
    new = Build("lib", (0, 187, 0), "0.187.0", Path("/y"), {})
    assert same_major(parse_spec("0.128.0"), "", [new, old]) == [old]
    assert same_major(parse_spec("0.130"), "", [new, old]) == []
    assert same_major(parse_spec(""), "", [old, new]) == [new, old]


# ---------------------------------------------------------------------------------------------
# resolution on the fake install


def test_same_major_is_served_with_a_label(fake):
    body, ctype, label = fake.resolve("https://cdn.jsdelivr.net/npm/chart.js@4.4.0/dist/chart.umd.min.js")
    assert body == b"/*chart4 min*/" and ctype.startswith("text/javascript")
    assert label == "chart.js@4.6.1 dist/chart.umd.min.js (requested chart.js@4.4.0)"
    assert served(fake, "https://cdn.jsdelivr.net/npm/chart.js") == "chart.js@4.6.1 dist/chart.umd.min.js"
    assert served(fake, "https://cdnjs.cloudflare.com/ajax/libs/Chart.js/4.4.1/chart.umd.js") == \
        "chart.js@4.6.1 dist/chart.umd.js"


@pytest.mark.parametrize("url", [
    "https://cdn.jsdelivr.net/npm/chart.js@3.9.1/dist/chart.min.js",
    "https://cdn.jsdelivr.net/npm/chart.js@2/dist/Chart.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/5.15.4/css/all.min.css",
    "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.min.js",          # UMD build gone in r160
    "https://cdn.jsdelivr.net/npm/three@0.150.0/examples/js/controls/OrbitControls.js",  # gone in r148
    "https://unpkg.com/left-pad@1.3.0/index.js",                              # installed, not a library
])
def test_other_majors_and_unlisted_packages_stay_blocked(fake, url):
    assert fake.resolve(url) is None


def test_three_rule(fake):
    r128 = "three@0.128.0 build/three.min.js"
    assert served(fake, "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js") == r128
    assert served(fake, "https://cdn.jsdelivr.net/npm/three@0.155.0/build/three.min.js") == r128
    assert served(fake, "https://unpkg.com/three/build/three.min.js") == r128
    assert served(fake, "https://cdn.jsdelivr.net/npm/three@0.128/examples/js/controls/OrbitControls.js") == \
        "three@0.128.0 examples/js/controls/OrbitControls.js"
    # module files: below r150 from the old release (0.128 is never served 0.187) ...
    assert served(fake, "https://unpkg.com/three@0.128.0/build/three.module.js") == \
        "three@0.128.0 build/three.module.js"
    # ... r150 and later, or unversioned, from the current one
    assert served(fake, "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js") == \
        "three@0.187.0 build/three.module.js"
    assert served(fake, "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.min.js") == \
        "three@0.187.0 build/three.module.js"
    assert served(fake, "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.core.js") == \
        "three@0.187.0 build/three.core.js"
    assert served(fake, "https://unpkg.com/three") == "three@0.187.0 build/three.cjs"


def test_unpkg_module_rewrites_bare_imports(fake):
    body, ctype, _ = fake.resolve("https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls.js?module")
    text = body.decode()
    assert "from 'https://unpkg.com/three@0.160.0/build/three.module.js?module'" in text
    assert 'from "https://unpkg.com/three@0.160.0/examples/jsm/math/X.js?module"' in text
    assert "from './Y.js'" in text  # relative imports are left to the browser
    assert "import('https://unpkg.com/three@0.160.0/build/three.module.js?module')" in text
    plain, _, _ = fake.resolve("https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls.js")
    assert b"from 'three'" in plain


@pytest.mark.parametrize("path", [
    "../../secret.txt", "build/../../secret.txt", "%2e%2e/%2e%2e/secret.txt", "build/%2E%2E/%2E%2E/secret.txt",
    "..%2f..%2fsecret.txt", "..\\..\\secret.txt", "./package.json/../../secret.txt", "/etc/passwd",
])
def test_path_traversal_is_refused(fake, path):
    for base in ("https://cdn.jsdelivr.net/npm/three@0.160.0/", "https://unpkg.com/chart.js@4/",
                 "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/"):
        hit = fake.resolve(base + path)
        assert hit is None or b"secret" not in hit[0], base + path


def test_symlink_out_of_the_package_is_refused(fake, tmp_path):
    link = fake.root / "chart.js" / "dist" / "leak.js"
    link.symlink_to(tmp_path / "secret.txt")
    assert fake.resolve("https://cdn.jsdelivr.net/npm/chart.js@4/dist/leak.js") is None


def test_content_types(fake):
    types = {url: fake.resolve(url)[1] for url in (
        "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css",
        "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/webfonts/fa-solid-900.woff2",
        "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@6/svgs/solid/house.svg",
        "https://cdn.jsdelivr.net/npm/chart.js@4/package.json",
        "https://unpkg.com/three@0.160.0/build/three.module.js")}
    assert list(types.values()) == ["text/css; charset=utf-8", "font/woff2", "image/svg+xml", "application/json",
                                    "text/javascript; charset=utf-8"]


def test_tailwind_play_cdn_gets_v4_with_the_config_prelude(fake):
    body, ctype, label = fake.resolve("https://cdn.tailwindcss.com/?plugins=forms")
    assert body.endswith(b"/*tw4*/") and b"set config(v)" in body
    assert label == "@tailwindcss/browser@4.3.4 dist/index.global.js (requested tailwindcss@3 play-CDN)"
    direct, _, _ = fake.resolve("https://cdn.jsdelivr.net/npm/@tailwindcss/browser@4")
    assert direct == b"/*tw4*/"


def test_google_fonts_css2(fake):
    url = ("https://fonts.googleapis.com/css2?family=Inter:ital,wght@0,400;0,700;1,400;1,900"
           "&family=Roboto+Slab:wght@400&display=swap")
    body, ctype, label = fake.resolve(url)
    css = body.decode()
    assert ctype == "text/css; charset=utf-8"
    faces = re.findall(r"font-style: (\w+);\s*font-weight: (\d+);", css)
    assert sorted(set(faces)) == [("italic", "400"), ("normal", "400"), ("normal", "700")]  # no 900 installed
    assert css.count("@font-face") == 6  # latin + latin-ext each, never cyrillic
    assert "font-display: swap;" in css and "cyrillic" not in css
    assert "url(https://fonts.gstatic.com/aesenv/inter/inter-latin-700-normal.woff2) format('woff2')" in css
    assert "unicode-range: U+0000-00FF;" in css
    assert label.startswith("@fontsource/inter@5.3.0 fonts.css (requested google-fonts: Inter, Roboto Slab")
    assert "missing Roboto Slab" in label


def test_google_fonts_v1_syntax_bunny_and_weight_ranges(fake):
    css = fake.resolve("https://fonts.googleapis.com/css?family=Inter:400,700italic|Unknown")[0].decode()
    assert sorted(set(re.findall(r"font-style: (\w+);\s*font-weight: (\d+);", css))) == \
        [("italic", "700"), ("normal", "400")]
    css = fake.resolve("https://fonts.bunny.net/css?family=inter:400")[0].decode()
    assert "font-family: 'inter';" in css
    css = fake.resolve("https://fonts.googleapis.com/css2?family=Inter:wght@100..900")[0].decode()
    assert set(re.findall(r"font-weight: (\d+);", css)) == {"400", "700"}
    css = fake.resolve("https://fonts.googleapis.com/css2?family=Inter")[0].decode()
    assert set(re.findall(r"font-weight: (\d+);", css)) == {"400"}


def test_google_fonts_without_any_installed_family_stays_blocked(fake):
    assert fake.resolve("https://fonts.googleapis.com/css2?family=Comic+Neue&display=swap") is None
    assert isinstance(parse_url("https://fonts.googleapis.com/css2?family=Comic+Neue"), FontCssAsk)


def test_font_css_cannot_be_injected(fake):
    css = fake.resolve("https://fonts.googleapis.com/css2?family=Inter%27;}{%27")[0].decode()
    assert "font-family: 'Inter';" in css and "}{" not in css


def test_font_files(fake):
    body, ctype, label = fake.resolve("https://fonts.gstatic.com/aesenv/inter/inter-latin-700-normal.woff2")
    assert body == b"wOF2\x07" and ctype == "font/woff2" and label.startswith("@fontsource/inter@5.3.0 ")
    for bad in ("https://fonts.gstatic.com/aesenv/inter/..%2fmetadata.json",
                "https://fonts.gstatic.com/aesenv/inter/inter-latin-800-normal.woff2",
                "https://fonts.gstatic.com/aesenv/roboto/roboto-latin-400-normal.woff2",
                "https://fonts.gstatic.com/s/inter/v13/UcCO3Fwr.woff2"):
        assert fake.resolve(bad) is None, bad


def test_missing_install_is_an_empty_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("AESENV_HOME", str(tmp_path))
    mirror = VendorMirror.default()
    assert mirror.available is False and mirror.versions == {}
    assert mirror.resolve("https://cdn.jsdelivr.net/npm/chart.js") is None


def test_versions_for_provenance(fake):
    assert fake.versions["three"] == ["0.128.0", "0.187.0"]
    assert fake.versions["@fontsource/inter"] == ["5.3.0"]
    assert "left-pad" not in fake.versions


def test_byte_cache_is_bounded():
    cache = _ByteCache(max_bytes=100)
    loads = []
    for key in range(10):
        cache.get(key, lambda k=key: loads.append(k) or bytes(20))
    assert sum(len(v) for v in cache._items.values()) <= 100 and len(cache._items) == 5
    cache.get(9, lambda: loads.append("again") or b"")
    assert "again" not in loads
    cache.get(0, lambda: loads.append("evicted") or bytes(20))
    assert "evicted" in loads
    cache.get("big", lambda: bytes(60))
    assert "big" not in cache._items  # over a quarter of the budget: served, not kept


def test_file_bodies_are_cached(fake):
    url = "https://cdn.jsdelivr.net/npm/chart.js@4/dist/chart.umd.js"
    fake.resolve(url)
    hits = fake._cache.hits
    fake.resolve(url)
    assert fake._cache.hits == hits + 1


def test_library_usage_summary(fake):
    urls = ["https://artifact.aesenv.invalid/index.html",
            "https://cdn.tailwindcss.com",
            "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js",
            "https://cdn.jsdelivr.net/npm/chart.js@3.9.1/dist/chart.min.js",
            "https://unpkg.com/aos@2.3.1/dist/aos.js",
            "https://fonts.googleapis.com/css2?family=Inter:wght@400&family=Lobster",
            "https://fonts.gstatic.com/aesenv/inter/inter-latin-400-normal.woff2",
            "https://example.com/tracker.js"]
    entries = []
    for url in urls:
        hit = fake.resolve(url)
        outcome = (RequestOutcome.SERVED if "artifact" in url else
                   RequestOutcome.SERVED_LOCAL if hit else RequestOutcome.BLOCKED)
        entries.append(RequestEntry(url=url, resource_type="script", outcome=outcome, detail=hit[2] if hit else ""))
    usage = library_usage(entries)
    assert usage.libraries_requested == ["tailwindcss@3 play-CDN", "three@r128", "chart.js@3.9.1", "aos@2.3.1",
                                         "font:Inter", "font:Lobster"]
    assert usage.libraries_served == ["@tailwindcss/browser@4.3.4", "three@0.128.0", "@fontsource/inter@5.3.0"]
    assert usage.blocked == ["chart.js@3.9.1", "aos@2.3.1"]
    assert usage.blocked_urls == [urls[3], urls[4], urls[7]]


# ---------------------------------------------------------------------------------------------
# the real install


@needs_mirror
@pytest.mark.parametrize("url, expected", [
    ("https://cdn.tailwindcss.com", "@tailwindcss/browser@4"),
    ("https://cdn.jsdelivr.net/npm/@tailwindcss/browser@4", "@tailwindcss/browser@4"),
    ("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js", "three@0.128.0 build/three.min.js"),
    ("https://cdn.jsdelivr.net/npm/three@0.128.0/examples/js/controls/OrbitControls.js", "three@0.128.0 examples/js/"),
    ("https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls.js", "three@0.187.0 examples/jsm/"),
    ("https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js", "three@0.187.0 build/three.module.js"),
    ("https://cdn.jsdelivr.net/npm/chart.js", "chart.js@4"),
    ("https://cdnjs.cloudflare.com/ajax/libs/Chart.js/4.4.0/chart.umd.min.js", "chart.js@4"),
    ("https://cdn.jsdelivr.net/npm/d3@7", "d3@7"),
    ("https://d3js.org/d3.v7.min.js", "d3@7"),
    ("https://cdnjs.cloudflare.com/ajax/libs/d3/7.8.5/d3.min.js", "d3@7"),
    ("https://cdn.jsdelivr.net/npm/echarts@5.4.3/dist/echarts.min.js", "echarts@5"),
    ("https://cdnjs.cloudflare.com/ajax/libs/echarts/5.4.3/echarts.min.js", "echarts@5"),
    ("https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.2/ScrollTrigger.min.js", "gsap@3"),
    ("https://cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js", "gsap@3"),
    ("https://cdnjs.cloudflare.com/ajax/libs/animejs/3.2.1/anime.min.js", "animejs@3.2.2 lib/anime.min.js"),
    ("https://unpkg.com/react@18/umd/react.production.min.js", "react@18"),
    ("https://unpkg.com/react-dom@18.2.0/umd/react-dom.production.min.js", "react-dom@18"),
    ("https://cdnjs.cloudflare.com/ajax/libs/react/18.2.0/umd/react.development.js", "react@18"),
    ("https://unpkg.com/@babel/standalone/babel.min.js", "@babel/standalone@7"),
    ("https://cdnjs.cloudflare.com/ajax/libs/babel-standalone/7.23.5/babel.min.js", "@babel/standalone@7"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css", "@fortawesome/fontawesome-free@6"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.5.1/webfonts/fa-brands-400.woff2",
     "@fortawesome/fontawesome-free@6"),
    ("https://use.fontawesome.com/releases/v5.15.4/css/all.css", "@fortawesome/fontawesome-free@5.15.4 css/all.css"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/5.15.4/css/all.min.css", "@fortawesome/fontawesome-free@5"),
    ("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.min.css", "font-awesome@4.7.0"),
    ("https://unpkg.com/lucide@latest", "lucide@"),
    ("https://code.jquery.com/jquery-3.7.1.min.js", "jquery@3"),
    ("https://code.jquery.com/jquery-1.12.4.min.js", "jquery@1"),
    ("https://unpkg.com/react@17/umd/react.production.min.js", None),
    ("https://cdn.jsdelivr.net/npm/echarts@4.9.0/dist/echarts.min.js", "echarts@4"),
    ("https://cdn.jsdelivr.net/npm/tailwindcss@2.2.19/dist/tailwind.min.css", "tailwindcss@2"),
    ("https://cdn.jsdelivr.net/npm/tailwindcss@3.4.1/dist/tailwind.min.css", None),  # v3 published no CSS build
    ("https://unpkg.com/swiper@6/swiper-bundle.min.js", None),  # below the range swiper 11 answers
    ("https://cdn.jsdelivr.net/npm/chart.js@1.0.2/Chart.min.js", None),
    ("https://cdn.jsdelivr.net/npm/three@0.160.0/+esm", None),
])
def test_real_mirror_resolves(url, expected):
    got = served(REAL, url)
    assert (got is None) if expected is None else (got or "").startswith(expected), got


@needs_mirror
def test_real_fonts():
    body, _, label = REAL.resolve("https://fonts.googleapis.com/css2?family=Inter:wght@400;700"
                                  "&family=Playfair+Display:ital@1&family=Press+Start+2P&display=swap")
    assert "missing" not in label and body.count(b"@font-face") >= 6
    for url in re.findall(r"url\(([^)]+)\)", body.decode()):
        assert REAL.resolve(url)[1] == "font/woff2"


# ---------------------------------------------------------------------------------------------
# end to end, with the real renderer




def _canvas_pixels(rendering) -> tuple[int, float]:
    """(distinct colours, share of pixels unlike the most common one) inside the first canvas."""
    canvas = next(e for e in rendering.elements if e.tag == "canvas")
    img = Image.open(io.BytesIO(rendering.full_page_png)).convert("RGB")
    crop = img.crop((int(canvas.x), int(canvas.y), int(canvas.x + canvas.w), int(canvas.y + canvas.h)))
    colors = crop.getcolors(crop.width * crop.height)
    top = max(n for n, _ in colors)
    return len(colors), 1 - top / (crop.width * crop.height)


def _served(rendering) -> dict[str, str]:
    return {r.url: r.detail for r in rendering.requests if r.outcome is RequestOutcome.SERVED_LOCAL}


TAILWIND_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>tw</title>
<script src="https://cdn.tailwindcss.com?plugins=forms"></script>
<script>tailwind.config = {darkMode: "class", theme: {extend: {colors: {primary: "#e11d48",
  brand: {DEFAULT: "#0000ff", 500: "#00aa00"}}, fontFamily: {display: ["Press Start 2P", "monospace"]}}}};</script>
<style type="text/tailwindcss">@layer components { .btn { @apply px-4 py-2 rounded-lg bg-primary text-white; } }</style>
</head><body class="bg-gray-100">
<div id="blue" class="bg-blue-600 text-white p-8 rounded-xl shadow-lg text-2xl font-bold">Hello</div>
<div id="primary" class="bg-primary p-4">custom colour from tailwind.config</div>
<div id="brand" class="bg-brand-500 text-brand p-4">nested colour</div>
<button id="btn" class="btn">@apply</button>
</body></html>"""


async def test_tailwind_play_cdn_page_is_styled(vendored, bare_renderer):
    r = await vendored.render(TAILWIND_PAGE)
    assert r.status.value == "ok" and not r.page_errors, r.page_errors
    blue = element_by_id(r, "blue")
    # Tailwind v4 defines its palette in OKLCH (blue-600 is oklch(54.6% 0.245 262.881)); the
    # snapshot reports it in sRGB.
    assert blue.own_background == "rgb(21, 93, 252)"
    assert blue.color == "rgb(255, 255, 255)" and blue.padding == [32.0] * 4 and blue.radius == 12
    assert blue.font_size == 24 and blue.font_weight == 700 and blue.shadow
    assert element_by_id(r, "primary").own_background == "rgb(225, 29, 72)"  # the v3 config shim
    brand = element_by_id(r, "brand")
    assert brand.own_background == "rgb(0, 170, 0)" and brand.color == "rgb(0, 0, 255)"
    assert element_by_id(r, "btn").own_background == "rgb(225, 29, 72)"
    assert "@tailwindcss/browser@4" in _served(r)["https://cdn.tailwindcss.com/?plugins=forms"]
    # The same page without the mirror: the CDN is blocked and the div is unstyled.
    bare = await bare_renderer.render(TAILWIND_PAGE)
    assert element_by_id(bare, "blue").own_background == "" and element_by_id(bare, "blue").padding == [0.0] * 4


THREE_UMD_PAGE = """<!DOCTYPE html><html><head><title>3d</title><style>body{margin:0}</style>
<script src="https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"></script>
<script src="https://cdn.jsdelivr.net/npm/three@0.128.0/examples/js/controls/OrbitControls.js"></script></head>
<body><p id="out">-</p><script>
const renderer = new THREE.WebGLRenderer({antialias: true});
renderer.setSize(640, 480); document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene(); scene.background = new THREE.Color(0x101030);
const camera = new THREE.PerspectiveCamera(60, 640 / 480, 0.1, 100);
camera.position.set(2, 2, 3); camera.lookAt(0, 0, 0);
new THREE.OrbitControls(camera, renderer.domElement);
scene.add(new THREE.AmbientLight(0xffffff, 0.5));
const light = new THREE.DirectionalLight(0xffffff, 1); light.position.set(3, 5, 2); scene.add(light);
scene.add(new THREE.Mesh(new THREE.BoxGeometry(1.5, 1.5, 1.5), new THREE.MeshStandardMaterial({color: 0xff8800})));
renderer.render(scene, camera);
document.getElementById("out").textContent = "r" + THREE.REVISION;
</script></body></html>"""

THREE_MODULE_PAGE = """<!DOCTYPE html><html><head><title>3d</title><style>body{margin:0}</style>
<script type="importmap">{"imports": {"three": "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js",
  "three/addons/": "https://cdn.jsdelivr.net/npm/three@0.160.0/examples/jsm/"}}</script></head>
<body><p id="out">-</p><script type="module">
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
const renderer = new THREE.WebGLRenderer({antialias: true});
renderer.setSize(640, 480); document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene(); scene.background = new THREE.Color(0x101030);
const camera = new THREE.PerspectiveCamera(60, 640 / 480, 0.1, 100);
camera.position.set(2, 2, 3); camera.lookAt(0, 0, 0);
new OrbitControls(camera, renderer.domElement);
scene.add(new THREE.AmbientLight(0xffffff, 0.5));
const light = new THREE.DirectionalLight(0xffffff, 3); light.position.set(3, 5, 2); scene.add(light);
scene.add(new THREE.Mesh(new THREE.BoxGeometry(1.5, 1.5, 1.5), new THREE.MeshStandardMaterial({color: 0xff8800})));
renderer.render(scene, camera);
document.getElementById("out").textContent = "r" + THREE.REVISION;
</script></body></html>"""


@pytest.mark.parametrize("page, revision", [(THREE_UMD_PAGE, "r128"), (THREE_MODULE_PAGE, "r187")],
                         ids=["umd-r128", "module-import-map"])
async def test_three_scene_draws_on_webgl(vendored, page, revision):
    r = await vendored.render(page)
    assert not r.page_errors, r.page_errors
    assert _element_text(r, "p") == revision
    distinct, lit = _canvas_pixels(r)
    assert distinct > 10 and 0.05 < lit < 0.6  # an orange, shaded cube on the dark background


def _element_text(rendering, tag: str) -> str:
    return next(e.text for e in rendering.elements if e.tag == tag)


CHART_PAGE = """<!DOCTYPE html><html><head><title>chart</title>
<script src="https://cdn.jsdelivr.net/npm/chart.js"></script></head>
<body style="margin:0"><div style="width:600px;height:400px"><canvas id="c"></canvas></div><p id="out">-</p><script>
const chart = new Chart(document.getElementById("c"), {type: "bar",
  data: {labels: ["A", "B", "C", "D"], datasets: [{label: "Sales", data: [12, 19, 7, 15],
         backgroundColor: ["#ef4444", "#3b82f6", "#22c55e", "#eab308"]}]},
  options: {animation: false, responsive: true, maintainAspectRatio: false}});
document.getElementById("out").textContent = "chart " + Chart.version;
</script></body></html>"""


async def test_chartjs_page_draws(vendored):
    r = await vendored.render(CHART_PAGE)
    assert not r.page_errors, r.page_errors
    assert element_by_id(r, "out").text.startswith("chart 4.")
    distinct, lit = _canvas_pixels(r)
    assert distinct > 20 and lit > 0.05
    img = Image.open(io.BytesIO(r.full_page_png)).convert("RGB")
    reds = int((np.asarray(img.crop((0, 0, 600, 400))) == (239, 68, 68)).all(axis=2).sum())
    assert reds > 1000  # the first bar, in its own colour


FONT_PAGE = """<!DOCTYPE html><html><head><title>fonts</title>
<link rel="preconnect" href="https://fonts.googleapis.com">
<link href="https://fonts.googleapis.com/css2?family=Inter:wght@400;700&family=Lobster&display=swap" rel="stylesheet">
<style>body{font-family:'Inter',sans-serif}</style></head>
<body><h1 id="title">Generated landing page</h1><p id="out">-</p><script>
document.fonts.load("700 16px Inter").then((faces) => {
  document.getElementById("out").textContent =
    "loaded=" + faces.length + " check=" + document.fonts.check("700 16px Inter");
});
</script></body></html>"""


async def test_google_fonts_inter_loads(vendored):
    r = await vendored.render(FONT_PAGE)
    assert element_by_id(r, "out").text == "loaded=1 check=true"
    assert element_by_id(r, "title").font_family == "Inter"
    detail = _served(r)
    css = next(v for k, v in detail.items() if k.startswith("https://fonts.googleapis.com/"))
    assert css.startswith("@fontsource/inter@") and "missing Lobster" in css
    assert any(k.endswith("inter-latin-700-normal.woff2") for k in detail)


FONT_AWESOME_PAGE = """<!DOCTYPE html><html><head><title>icons</title>
<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css"></head>
<body style="font-size:48px"><i id="house" class="fa-solid fa-house"></i> <i id="gh" class="fa-brands fa-github"></i>
<p id="out" style="font-size:16px">-</p><script>
document.fonts.ready.then(() => Promise.all([document.fonts.load('900 48px "Font Awesome 6 Free"'),
                                             document.fonts.load('400 48px "Font Awesome 6 Brands"')]))
  .then(() => {
    const glyph = getComputedStyle(document.getElementById("house"), "::before").content;
    document.getElementById("out").textContent = "solid=" + document.fonts.check('900 48px "Font Awesome 6 Free"')
      + " brands=" + document.fonts.check('400 48px "Font Awesome 6 Brands"') + " glyph=" + glyph.length;
  });
</script></body></html>"""


async def test_font_awesome_icons_render(vendored, bare_renderer):
    r = await vendored.render(FONT_AWESOME_PAGE)
    assert element_by_id(r, "out").text == "solid=true brands=true glyph=3"
    house = element_by_id(r, "house")
    assert house.font_family == "Font Awesome 6 Free" and house.w > 30
    assert any(k.endswith("webfonts/fa-solid-900.woff2") for k in _served(r))
    # icon glyphs are drawn: the icon's box has dark pixels, which the blocked page lacks
    def ink(rendering) -> int:
        e = next((e for e in rendering.elements if e.id == "house"), None)
        if e is None:  # an empty <i> without the icon font has no box at all
            return 0
        img = Image.open(io.BytesIO(rendering.full_page_png)).convert("L")
        return int((np.asarray(img.crop((int(e.x), int(e.y), int(e.x + e.w), int(e.y + e.h)))) < 100).sum())
    bare = await bare_renderer.render(FONT_AWESOME_PAGE)
    assert ink(r) > 300 and ink(bare) < ink(r) / 3


LIBRARIES_PAGE = """<!DOCTYPE html><html><head><title>libs</title>
<script src="https://unpkg.com/react@18/umd/react.production.min.js"></script>
<script src="https://unpkg.com/react-dom@18/umd/react-dom.production.min.js"></script>
<script src="https://unpkg.com/@babel/standalone/babel.min.js"></script>
<script src="https://d3js.org/d3.v7.min.js"></script>
<script src="https://cdn.jsdelivr.net/npm/echarts@5.4.3/dist/echarts.min.js"></script>
<script src="https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.2/gsap.min.js"></script>
<script src="https://cdnjs.cloudflare.com/ajax/libs/animejs/3.2.1/anime.min.js"></script>
<script src="https://code.jquery.com/jquery-3.7.1.min.js"></script>
<script src="https://unpkg.com/lucide@latest"></script>
<script src="https://unpkg.com/aos@2.3.1/dist/aos.js"></script></head>
<body><div id="root"></div><p id="globals">-</p><i data-lucide="heart"></i>
<div id="ec" style="width:400px;height:300px"></div>
<script>
lucide.createIcons();
echarts.init(document.getElementById("ec")).setOption({animation: false, xAxis: {data: ["a", "b"]}, yAxis: {},
  series: [{type: "bar", data: [3, 5]}]});
document.getElementById("globals").textContent = [typeof d3.select, typeof gsap.to, typeof anime, typeof $.fn.jquery,
  typeof lucide.createIcons, typeof AOS, !!document.querySelector("svg.lucide")].join(",");
</script>
<script type="text/babel">
function App() { const [n] = React.useState(3); return <h2 id="app">React {React.version} says {n}</h2>; }
ReactDOM.createRoot(document.getElementById("root")).render(<App />);
</script></body></html>"""


async def test_common_libraries_load_together(vendored):
    r = await vendored.render(LIBRARIES_PAGE)
    assert element_by_id(r, "globals").text == "function,function,function,string,function,object,true"
    assert element_by_id(r, "app").text.startswith("React 18.3.1 says 3")
    assert r.metrics.canvases  # echarts drew its canvas
    usage = library_usage(r.requests)
    assert usage.blocked == []
    assert {"react@18.3.1", "react-dom@18.3.1", "d3@7.9.2", "echarts@5.6.0", "gsap@3.15.0", "animejs@3.2.2",
            "jquery@3.8.0", "aos@2.3.4"} <= set(usage.libraries_served)
    assert "d3@7" in usage.libraries_requested and "echarts@5.4.3" in usage.libraries_requested
