"""Checks bench/run-vs-headless's paired ratio: the figure the ≤ 5 % target of `switchboard run` is judged on."""

import importlib.machinery
import importlib.util
import os
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "run-vs-headless")


def load_bench():
    # The script has no .py suffix: load it by path, without running its main().
    loader = importlib.machinery.SourceFileLoader("run_vs_headless", BENCH)
    spec = importlib.util.spec_from_loader("run_vs_headless", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class PairedRatioTest(unittest.TestCase):
    def setUp(self):
        self.bench = load_bench()

    def test_median_of_the_rounds_own_ratios(self):
        # Per-round ratios -1: +10 %, +20 %, +0 %: the median is +10 %, whatever the columns' own medians say.
        low, median, high = self.bench.paired_ratio([1.1, 2.4, 3.0], [1.0, 2.0, 3.0])
        self.assertAlmostEqual(median, 0.10)
        self.assertLessEqual(low, median)
        self.assertGreaterEqual(high, median)
        self.assertGreaterEqual(low, 0.0)   # every resample's median is one of the three ratios
        self.assertLessEqual(high, 0.20 + 1e-12)

    def test_drift_that_moves_both_columns_cancels(self):
        # The machine slows down over the rounds; run is 5 % slower than the agent in every round.
        base = [1.0 + 0.1 * i for i in range(20)]
        walls = [b * 1.05 for b in base]
        low, median, high = self.bench.paired_ratio(walls, base)
        for value in (low, median, high):
            self.assertAlmostEqual(value, 0.05)

    def test_the_interval_is_the_same_for_the_same_figures(self):
        walls = [1.0, 1.3, 0.9, 1.1, 1.2, 1.05]
        base = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
        self.assertEqual(self.bench.paired_ratio(walls, base), self.bench.paired_ratio(walls, base))
        low, median, high = self.bench.paired_ratio(walls, base)
        self.assertLess(low, high)  # spread figures give an interval, not a point


if __name__ == "__main__":
    unittest.main()
