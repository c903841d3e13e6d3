"""A page cannot pick its luck: the windows an interaction compares draw the same random numbers
whatever the page drew before (issue 47, forgery search seed 8).

The page's randomness is seeded, so a page that draws a chosen count of numbers before play
chooses which numbers its game draws while it is tested; the search found a hidden chart that did
so by accident and turned a game ended mid-test (2/3) into 3/3. Each window the agent compares now
starts the draws afresh from the render's seed.
"""

import pytest

from aesenv.interact import Action, label
from aesenv.interact.acting import Actor

# A button that rolls a die (a random face, drawn at a random place) and starts a canvas that
# sprinkles a random dot every frame: nothing random shows until the click, all after it is luck.
DICE = """<!doctype html><html><body style="margin:30px;font-family:sans-serif">
<button id=it style="font-size:20px;padding:10px 18px">Roll</button> <b id=face>?</b>
<canvas id=c width=400 height=240 style="display:block;margin-top:16px;border:1px solid #999"></canvas>
<script>
%s
const g = document.getElementById('c').getContext('2d');
let playing = false;
function sprinkle() {
  g.fillStyle = 'hsl(' + Math.floor(Math.random() * 360) + ',70%%,50%%)';
  g.fillRect(Math.random() * 396, Math.random() * 236, 4, 4);
  requestAnimationFrame(sprinkle);
}
document.getElementById('it').addEventListener('click', () => {
  if (!playing) { playing = true; requestAnimationFrame(sprinkle); }
  const n = 1 + Math.floor(Math.random() * 6);
  document.getElementById('face').textContent = String(n);
  g.fillStyle = '#111';
  g.fillRect(Math.random() * 300, Math.random() * 140, 20 * n, 20 * n);
});
</script></body></html>"""

DRAW_FIRST = "for (let i = 0; i < %d; i++) Math.random();"
# A page that would rather keep its own luck: it tries to take the reseed away before drawing.
TAKE_IT_AWAY = ("try { window.__aesenv__.state.reseed = () => {}; } catch (e) {}"
                "try { Object.defineProperty(window.__aesenv__.state, 'reseed', { value: () => {} }); } catch (e) {}"
                "try { delete window.__aesenv__.state.reseed; } catch (e) {}" + DRAW_FIRST % 5)


async def _roll(renderer, prelude: str):
    async with renderer.session(DICE % prelude) as (_, live):
        labeling = await label(live)
        actor = Actor(live)
        await actor.start()
        mark = next(m for m in labeling.marks if m.path == "#it")
        measured = await actor.run(Action(kind="click", mark=mark.index), labeling)
    return measured.before.png, measured.after.png, measured.response


async def test_draws_made_before_play_change_nothing_the_agent_compares(renderer):
    honest = await _roll(renderer, "")
    for prelude in (DRAW_FIRST % 1, DRAW_FIRST % 3, DRAW_FIRST % 7, TAKE_IT_AWAY):
        before, after, response = await _roll(renderer, prelude)
        assert before == honest[0] and after == honest[1], prelude  # the same frames, pixel for pixel
        assert response == honest[2], prelude


@pytest.mark.parametrize("window", [1, 2])
async def test_the_windows_still_draw_luck_from_the_render_seed(renderer, window):
    # Reseeding does not make the page deterministic across seeds: another render seed is another
    # roll (the draws differ), so the reseed is a fixed start, not a constant.
    async with renderer.session(DICE % "", seed=0) as (_, live):
        await live.reseed(window)
        zero = await live.evaluate_in_page("() => [Math.random(), Math.random()]")
    async with renderer.session(DICE % "", seed=1) as (_, live):
        await live.reseed(window)
        one = await live.evaluate_in_page("() => [Math.random(), Math.random()]")
        await live.reseed(window)
        again = await live.evaluate_in_page("() => [Math.random(), Math.random()]")
    assert zero != one and one == again
