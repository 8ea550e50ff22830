"""The simulated users of rankscope.testing.traffic: the many-session simulator pinned on a
small seeded case, each user model's rules, and its agreement with the one-session browser."""

from __future__ import annotations

import math

import numpy as np

from rankscope.testing.traffic import (
    DBN_USER,
    Universe,
    UserModel,
    browse,
    rank,
    simulate_clicks,
)


def test_simulate_clicks_is_pinned_for_a_seed() -> None:
    universe = Universe.make(2, 5, seed=0)
    assert [q.grades for q in universe.queries] == [
        {"d0-0": 1, "d0-1": 0, "d0-2": 0, "d0-3": 0, "d0-4": 2},
        {"d1-0": 2, "d1-1": 1, "d1-2": 1, "d1-3": 0, "d1-4": 3},
    ]
    sim = simulate_clicks(universe, 3, seed=1, depth=4)
    log = sim.log
    assert log.session.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert [log.queries[q] for q in log.query[::4]] == [
        "query number 0",
        "query number 1",
        "query number 0",
    ]
    assert [log.docs[d] for d in log.doc] == [
        *("d0-4", "d0-1", "d0-2", "d0-3"),
        *("d1-0", "d1-4", "d1-1", "d1-2"),
        *("d0-4", "d0-2", "d0-0", "d0-3"),
    ]
    assert log.position.tolist() == [1, 2, 3, 4] * 3
    assert np.flatnonzero(log.clicked).tolist() == [0, 5]
    # both clicks satisfied (dwell 40-120 s), so both sessions stopped there
    assert np.round(log.dwell[[0, 5]], 2).tolist() == [100.03, 91.31]
    assert np.isnan(np.delete(log.dwell, [0, 5])).all()
    assert sim.truth[("query number 1", "d1-4")] == 3 and len(sim.truth) == 10


def test_user_models_follow_their_rules() -> None:
    universe = Universe.make(20, 20, seed=2)
    sessions = 4000
    # cascade: nothing is clicked after a satisfying click (dwell >= 40 s)
    log = simulate_clicks(universe, sessions, DBN_USER, seed=3).log
    dwell = log.dwell.reshape(sessions, 10)
    clicked = log.clicked.reshape(sessions, 10)
    for s in range(sessions):
        satisfied = np.flatnonzero(clicked[s] & (dwell[s] >= 40))
        if satisfied.size:
            assert not clicked[s, satisfied[0] + 1 :].any()
    # position-based users examine by position alone: with examination (1, 0) only the top
    # result is ever clicked, however satisfied
    top = UserModel("top", cascade=False, examination=(1.0, 0.0))
    only = simulate_clicks(universe, sessions, top, seed=3).log
    assert set(only.position[only.clicked].tolist()) == {1}
    # ... and never stop: more deep clicks than the cascade's
    pbm = simulate_clicks(universe, sessions, UserModel("pbm", cascade=False), seed=3).log
    assert (pbm.clicked & (pbm.position >= 5)).sum() > 2 * (log.clicked & (log.position >= 5)).sum()
    # click noise 1: every decision a fair coin, whatever the grade
    coin = UserModel("coin", click_noise=1.0)
    click, satisfied_p = coin.probabilities()
    assert click.tolist() == satisfied_p.tolist() == [0.5] * 4
    first = simulate_clicks(universe, sessions, coin, seed=4).log
    share = first.clicked[first.position == 1].mean()
    assert abs(share - 0.5) < 3 * math.sqrt(0.25 / sessions), share


def test_many_sessions_click_like_the_one_session_browser() -> None:
    # the same process in two orders of draws: click-through rate by position agrees within
    # sampling error (20,000 sessions each; sd of a rate near 0.59 about 0.0035)
    universe = Universe.make(60, 20, seed=1)
    rng = np.random.default_rng(5)
    by_position = np.zeros(10)
    n = 20_000
    for _ in range(n):
        q = universe.draw(rng)
        for c in browse(rank(q, 1.5, rng), q.grades, rng):
            by_position[c.position - 1] += 1
    log = simulate_clicks(universe, n, seed=6).log
    vectorised = np.bincount(log.position[log.clicked] - 1, minlength=10) / n
    sd = np.sqrt(by_position / n * (1 - by_position / n) / n) * math.sqrt(2)
    assert (np.abs(vectorised - by_position / n) < 4 * sd + 1e-3).all()
