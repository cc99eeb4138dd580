package dev.aura.realtime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RoundsTest {
    @Test
    void medianOfOddAndEvenCountsIgnoresNaN() {
        assertEquals(2.0, Rounds.median(new double[] {3, 1, 2}));
        assertEquals(2.5, Rounds.median(new double[] {4, 1, 3, 2}));
        assertEquals(5.0, Rounds.median(new double[] {Double.NaN, 5}));
        assertTrue(Double.isNaN(Rounds.median(new double[] {})));
    }

    @Test
    void medianRatioIsTheMedianOfEachRoundsRatioNotARatioOfMedians() {
        Rounds r = new Rounds("fig", "rows/s", "ceiling")
                .add(100, 200, "") // 0.5
                .add(90, 100, "") // 0.9
                .add(300, 250, ""); // 1.2
        assertEquals(100, r.median());
        assertEquals(200, r.medianBaseline());
        assertEquals(0.9, r.medianRatio(), 1e-9);
        assertEquals(0.5, r.minRatio(), 1e-9);
        assertEquals(1.2, r.maxRatio(), 1e-9);
        assertEquals(90, r.min());
        assertEquals(300, r.max());
        assertEquals(2.1, r.relativeSpread(), 1e-9);
    }

    @Test
    void aTargetIsMetOnTheMedianNotTheBestRound() {
        Rounds r = new Rounds("fig", "rows/s", "Debezium")
                .add(160, 100, "") // 1.6: best round meets 1.5×
                .add(120, 100, "")
                .add(130, 100, "");
        assertFalse(Rounds.atLeast(r.medianRatio(), 1.5));
        assertTrue(Rounds.atLeast(r.maxRatio(), 1.5));
        Rounds p99 = new Rounds("lat", "ms", null).add(40).add(45).add(400);
        assertTrue(Rounds.atMost(p99.median(), 50));
        assertFalse(Rounds.atMost(Double.NaN, 50));
        assertFalse(Rounds.atLeast(Double.NaN, 0));
    }

    @Test
    void withoutABaselineTheRatioIsADash() {
        Rounds r = new Rounds("fig", "rows/s", null).add(1).add(2).add(3);
        assertTrue(Double.isNaN(r.medianRatio()));
        assertEquals("–", r.ratioSummary());
        assertEquals("1 / 2 / 3", r.values());
        assertTrue(r.markdown().contains("| **median** | **2** | – | – | spread 1–3 |"));
        Rounds ms = new Rounds("lat", "ms", null).add(4.25).add(3.3).add(5.4);
        assertEquals("median 4.3 ms (spread 3.3–5.4, 3 rounds)", ms.summary());
    }

    @Test
    void aRowWithoutABaselineSaysSo() {
        Report report = new Report();
        report.row("x", "1", "–", "–", "–", null);
        assertEquals("– (no baseline: not given)", report.rows.get(0).baseline());
        Rounds r =
                new Rounds("fig", "rows/s", "c").add(10, 5, "").add(20, 10, "").add(30, 10, "");
        report.row(r, null, "c: 5–10", "≥ 2×", Rounds.atLeast(r.medianRatio(), 2));
        assertTrue(report.rows
                .get(1)
                .measured()
                .startsWith("median 20 rows/s (spread 10–30, 3 rounds); rounds: 10 / 20 / 30"));
        assertEquals(1, report.rounds.size());
        assertTrue(RunAnalysis.render(report).contains("1 of 1 targets met"));
    }
}
