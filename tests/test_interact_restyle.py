"""A control's own hover, focus and active restyle is not a response; a visible change is (issue 47).

Each page has one control, `#it`. The forgeries change nothing a user sees but the control's own
pointer and focus look (or only the DOM), and must score 0; the honest controls' whole response
may be inside their own box, and must score 1.
"""

import numpy as np
import pytest

from aesenv.interact import Action, label
from aesenv.interact.acting import FRAME_PX, Actor, _frame_around
from aesenv.interact.explorer import measured_verdict
from aesenv.interact.models import Box

BUTTON = "font-size:18px;padding:12px 22px;border:1px solid #94a3b8;border-radius:8px;background:#fff;color:#0f172a"


def _page(style: str, body: str, script: str = "") -> str:
    return (f"<!doctype html><html><head><style>body{{font-family:system-ui;margin:40px;background:#fff}}"
            f"#it{{{BUTTON}}}{style}</style></head><body>{body}<script>const it = document.getElementById('it');"
            f"{script}</script></body></html>")


FORGED = {
    "attribute-and-focus-ring": _page(
        "#it:focus{outline:3px solid #2563eb;outline-offset:2px}", "<button id=it>Book</button>",
        "it.addEventListener('click', () => it.setAttribute('data-clicked', '1'));"),
    "attribute-and-focus-fill": _page(
        "#it:focus{background:#1d4ed8;color:#fff}", "<button id=it>Book</button>",
        "it.addEventListener('click', () => it.setAttribute('data-clicked', '1'));"),
    "attribute-and-focus-visible-fill": _page(
        "#it:focus-visible{background:#1d4ed8;color:#fff;outline:4px solid #f59e0b}", "<button id=it>Book</button>",
        "it.addEventListener('click', () => it.setAttribute('data-clicked', '1'));"),
    "focus-glow-beyond-the-control": _page(
        "#it:focus{box-shadow:0 0 0 24px rgba(37,99,235,.4)}", "<button id=it>Book</button>",
        "it.addEventListener('click', () => it.dataset.n = String(Number(it.dataset.n || 0) + 1));"),
    "focus-within-card-and-sibling": _page(
        ".card{padding:24px;background:#f8fafc}.card:focus-within{background:#1e3a8a}#it:focus + p{color:#dc2626}"
        ".card:has(#it:focus){outline:6px solid #f59e0b}",
        "<div class=card><button id=it>Book</button><p>Seats left: 4</p></div>",
        "it.addEventListener('click', () => it.setAttribute('aria-pressed', 'true'));"),
    "lingering-active-restyle": _page(
        "#it:active{background:#1d4ed8;color:#fff;box-shadow:0 0 0 18px rgba(37,99,235,.4);transition:none!important}"
        "#it{transition:background-color 30s linear,color 30s linear,box-shadow 30s linear!important}",
        "<button id=it>Book</button>",
        "it.addEventListener('pointerdown', () => getComputedStyle(it).boxShadow);"),
    "title-and-aria-only": _page(
        "#it:focus{outline:3px solid #2563eb}", "<button id=it aria-pressed=false>Remember me</button>",
        "it.addEventListener('click', () => { it.setAttribute('aria-pressed', 'true'); it.title = 'On'; });"),
    "class-outline-at-an-offset": _page(
        "#it.on{outline:3px solid #f59e0b;outline-offset:14px}", "<button id=it>Goal</button>",
        "it.addEventListener('click', () => it.classList.toggle('on'));"),
    "class-outline-inset": _page(
        "#it.on{outline:2px solid #f59e0b;outline-offset:-7px}", "<button id=it>Goal</button>",
        "it.addEventListener('click', () => it.classList.toggle('on'));"),
    "class-dashed-ring-on-a-wrapper": _page(
        ".wrap{display:inline-block;padding:10px}.wrap.on{outline:4px dashed #f59e0b}",
        "<span class=wrap><button id=it>Goal</button></span>",
        "it.addEventListener('click', () => it.parentElement.classList.toggle('on'));"),
    "unstyled-class-on-a-moving-banner": _page(
        "@keyframes drift{from{background-position:0 0}to{background-position:400px 0}}"
        ".banner{height:220px;margin-top:24px;background:repeating-linear-gradient(90deg,#1e3a8a 0 40px,#93c5fd 40px 80px)}"
        ".banner.on{animation:drift 2s linear infinite}",
        "<button id=it>Book</button><div id=w><div class=banner id=b></div></div>",
        # It starts moving after the render (which stops what moves at capture) and keeps moving;
        # the click changes its wrapper, which changed nowhere else: a DOM change over moving pixels.
        "setTimeout(() => document.getElementById('b').classList.add('on'), 1000);"
        "it.addEventListener('click', () => document.getElementById('w').classList.toggle('seen'));"),
    "blur-takes-the-focus-fill-away": _page(
        "#it:focus{background:#facc15}", "<button id=it>Pause</button>",
        "it.addEventListener('click', () => it.blur());"),
}

HONEST = {
    "counter-label-counts-up": _page(
        "#it:focus{outline:3px solid #2563eb}", "<button id=it>Glasses today: 0</button>",
        "let n = 0; it.addEventListener('click', () => { it.textContent = 'Glasses today: ' + (++n); });"),
    "switch-that-flips": _page(
        "#it{display:inline-block;width:54px;height:30px;padding:0;border-radius:15px;background:#cbd5e1;position:relative}"
        "#it::after{content:'';position:absolute;top:3px;left:3px;width:24px;height:24px;border-radius:50%;background:#fff}"
        "#it[aria-checked=true]{background:#16a34a}#it[aria-checked=true]::after{left:27px}",
        "<span id=it role=switch aria-checked=false tabindex=0></span>",
        "it.addEventListener('click', () => it.setAttribute('aria-checked', String(it.getAttribute('aria-checked') !== 'true')));"),
    "styled-checkbox": _page(
        "#it{display:inline-flex;gap:10px;align-items:center}#it input{position:absolute;opacity:0;width:1px;height:1px}"
        ".box{width:22px;height:22px;border:2px solid #334155;border-radius:4px}input:checked + .box{background:#2563eb}",
        "<label id=it><input type=checkbox><span class=box></span>Remind me</label>"),
    "tab-that-restyles-and-shows-a-panel": _page(
        "#it[aria-selected=true]{background:#0f172a;color:#fff}.panel{padding:16px;font-size:18px}",
        "<button id=it role=tab aria-selected=false>Specs</button><div class=panel id=p>Overview of the product.</div>",
        "it.addEventListener('click', () => { it.setAttribute('aria-selected', 'true');"
        " document.getElementById('p').textContent = 'Drivers 40 mm, 250 g, Bluetooth 5.3.'; });"),
    "pressed-fill": _page(
        "#it[aria-pressed=true]{background:#0f172a;color:#fff}", "<button id=it aria-pressed=false>Bold</button>",
        "it.addEventListener('click', () => it.setAttribute('aria-pressed', String(it.getAttribute('aria-pressed') !== 'true')));"),
    "focus-sent-to-a-field": _page(
        "textarea{display:block;margin-top:20px;width:400px;height:80px;font-size:16px}"
        "textarea:focus{outline:3px solid #2563eb}",
        "<button id=it>Reply</button><textarea id=box></textarea>",
        "it.addEventListener('click', () => document.getElementById('box').focus());"),
}


async def _click_it(live):
    labeling = await label(live)
    actor = Actor(live)
    await actor.start()
    mark = next(m for m in labeling.marks if m.path == "#it")
    return await actor.run(Action(kind="click", mark=mark.index), labeling)


@pytest.mark.parametrize("name, expected", [*((name, 0) for name in sorted(FORGED)),
                                            *((name, 1) for name in sorted(HONEST))])
async def test_a_click_scores_what_it_changed_beyond_the_controls_own_restyle(renderer, name, expected):
    async with renderer.session({**FORGED, **HONEST}[name]) as (_, live):
        measured = await _click_it(live)
    verdict = measured_verdict(measured.response)
    assert verdict.score == expected, (name, verdict.reason, measured.response)


async def test_the_restyle_is_on_screen_and_left_out_rather_than_never_drawn(renderer):
    # The forgeries score 0 because their restyle is measured and set aside, not because it never
    # shows: the outline ring is found as a frame, and the focus that a blur took away is forced
    # back on for the frame after.
    async with renderer.session(FORGED["class-outline-at-an-offset"]) as (_, live):
        outline = await _click_it(live)
    assert outline.response.frame_px > 200 and outline.response.changed_px == 0
    async with renderer.session(FORGED["blur-takes-the-focus-fill-away"]) as (_, live):
        sent: list[str] = []
        send = live.cdp.send

        async def spy(method, params=None):
            sent.append(method)
            return await send(method, params)

        live.cdp.send = spy
        blurred = await _click_it(live)
    assert sent.count("CSS.forcePseudoState") == 2  # on for the frame after, then off
    assert not blurred.response.responded


def _ring(shape, box, offset, thickness, dashed=False):
    """A change map with a rectangular ring `offset` px outside `box` (negative: inside)."""
    change = np.zeros(shape, dtype=bool)
    x0, y0 = int(box.x) - offset - thickness, int(box.y) - offset - thickness
    x1, y1 = int(box.x + box.w) + offset + thickness, int(box.y + box.h) + offset + thickness
    change[y0:y1, x0:x1] = True
    change[y0 + thickness:y1 - thickness, x0 + thickness:x1 - thickness] = False
    if dashed:  # 6 px dashes with 6 px gaps along every side
        rows, cols = np.indices(shape)
        change[(rows // 6 + cols // 6) % 2 == 1] = False
    return change


CONTROL = Box(x=200, y=100, w=140, h=48)


@pytest.mark.parametrize("offset, thickness, dashed", [(2, 3, False), (20, 4, False), (-8, 2, False), (4, 3, True),
                                                       (0, FRAME_PX, False)])
def test_a_thin_ring_around_the_control_is_a_frame_wherever_it_is(offset, thickness, dashed):
    change = _ring((400, 600), CONTROL, offset, thickness, dashed)
    assert (_frame_around(change, CONTROL) == change).all()


def test_what_is_not_a_thin_ring_around_the_control_is_no_frame():
    shape = (400, 600)
    thick = _ring(shape, CONTROL, 2, FRAME_PX + 4)
    elsewhere = _ring(shape, Box(x=420, y=250, w=100, h=60), 2, 3)
    fill = np.zeros(shape, dtype=bool)
    fill[100:148, 200:340] = True
    label = np.zeros(shape, dtype=bool)
    label[118:132, 250:290:3] = True  # glyph strokes across the centre
    around_a_button_on_a_picture = np.zeros(shape, dtype=bool)
    around_a_button_on_a_picture[40:220, 120:440] = True
    around_a_button_on_a_picture[100:148, 200:340] = False  # a slide changed all around the button on it
    for change in (thick, elsewhere, fill, label, around_a_button_on_a_picture):
        assert not _frame_around(change, CONTROL).any()
    # A ring and a label change inside it: the ring is the frame, the label still counts.
    both = _ring(shape, CONTROL, 2, 3) | label
    frame = _frame_around(both, CONTROL)
    assert (frame == _ring(shape, CONTROL, 2, 3)).all() and (both & ~frame).sum() == label.sum()
