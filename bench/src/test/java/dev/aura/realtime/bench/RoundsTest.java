package dev.aura.realtime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RoundsTest {
    @Test
    void medianOfOddAndEvenCountsAndNeverOfAMissingValue() {
        assertEquals(2.0, Rounds.median(new double[] {3, 1, 2}));
        assertEquals(2.5, Rounds.median(new double[] {4, 1, 3, 2}));
        // a missing value is not dropped: the median is unknown (issue 39)
        assertTrue(Double.isNaN(Rounds.median(new double[] {Double.NaN, 5})));
        assertTrue(Double.isNaN(Rounds.median(new double[] {})));
        assertEquals(1.0, Rounds.mad(new double[] {1, 2, 3, 4, 10}));
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

    /** Five complete rounds of n rows each at the given rates, 4 s of CPU each. */
    private static Rounds complete(double... rates) {
        Rounds r = new Rounds("1. fig", "rows/s", "Debezium");
        for (double v : rates) {
            r.add(Sample.of(v).counted(100, 100).cpu(4), Sample.of(100).counted(100, 100), "");
        }
        return r;
    }

    @Test
    void aRoundThatDidNotCompleteIsInvalidAndFailsItsFigureInsteadOfEnteringTheMedian() {
        Rounds r = complete(160, 170, 180, 175);
        // the fifth reader dropped its last 10 rows: no rate, and the round says why
        r.add(Sample.of(Double.NaN).counted(100, 90).cpu(4), Sample.of(100).counted(100, 100), "");
        assertEquals(1, r.invalidCount());
        assertEquals("incomplete: 90 of 100 received", r.reasons(4).getFirst());
        assertEquals(172.5, r.median()); // the valid rounds only
        Target.Verdict v = CdcRounds.VS_DEBEZIUM.judge(r);
        assertFalse(v.met());
        assertTrue(v.why().contains("1 invalid round(s) (round 5: incomplete: 90 of 100 received)"), v.why());
        // the same five rounds complete meet the target
        assertTrue(
                CdcRounds.VS_DEBEZIUM.judge(complete(160, 170, 180, 175, 165)).met());
        // the baseline's own round must complete too
        Rounds b = complete(160, 170, 180, 175);
        b.add(Sample.of(170).counted(100, 100), Sample.of(100).counted(100, 99), "");
        assertEquals("baseline incomplete: 99 of 100 received", b.reasons(4).getFirst());
    }

    @Test
    void aRoundThatBeatsItsOwnCeilingIsInvalid() {
        Rounds r = new Rounds("1. stream", "rows/s", "ceiling");
        for (double v : new double[] {40, 42, 41, 43}) {
            r.add(Sample.of(v).ceiling(45), Sample.of(45), "");
        }
        r.add(Sample.of(85).ceiling(45), Sample.of(45), ""); // figure 1's round 3 of 2026-12-05: 1.88× the ceiling
        assertEquals(1, r.invalidCount());
        assertEquals("beats its own ceiling (85 > 45)", r.reasons(4).getFirst());
        assertFalse(CdcRounds.VS_CEILING.judge(r).met());
    }

    @Test
    void aRoundWhoseCpuPerRowIsFarFromItsSiblingsIsInvalid() {
        Rounds r = new Rounds("1. stream", "rows/s", null);
        for (double cpu : new double[] {4.3, 4.1, 0.8, 4.4, 4.2}) { // the 0.8 s round counted someone else's rows
            r.add(Sample.of(25_000).counted(100_000, 100_000).cpu(cpu), null, "");
        }
        assertEquals(1, r.invalidCount());
        assertTrue(
                r.reasons(2).getFirst().startsWith("CPU per unit 0.19× its siblings' median"),
                r.reasons(2).getFirst());
        assertTrue(r.valid(0));
    }

    @Test
    void anIncompleteRoundsCpuIsNotASiblingsMeasure() {
        // round 2 waited 30 s for rows that never came: its CPU per row says nothing about the others
        Rounds r = new Rounds("1. stream", "rows/s", null);
        double[] cpu = {1.7, 2.3, 1.4, 0.6, 0.7};
        for (int i = 0; i < cpu.length; i++) {
            r.add(
                    Sample.of(i == 1 ? Double.NaN : 9_000)
                            .counted(20_000, i == 1 ? 19_990 : 20_000)
                            .cpu(cpu[i]),
                    null,
                    "");
        }
        assertEquals(1, r.invalidCount());
        assertFalse(r.valid(1));
        assertTrue(r.valid(3), r.invalidSummary());
    }

    @Test
    void aRoundWithNoDataIsInvalidNotDropped() {
        Rounds r = new Rounds("lat", "ms", null)
                .add(40)
                .add(45)
                .add(Double.NaN)
                .add(41)
                .add(42);
        assertEquals(1, r.invalidCount());
        assertEquals("no data", r.reasons(2).getFirst());
        assertFalse(LatencyBench.STREAM_5000.judge(r).met());
        assertTrue(r.values().contains("– (invalid)"));
        assertTrue(r.markdown().contains("| **no**: no data |"), r.markdown());
    }

    @Test
    void aTargetsTextAndPredicateAreOneObjectThatCannotDrift() {
        assertEquals("delivered ≥ 10,000 msg/s, realtime-js p99 ≤ 100 ms", DbBroadcastBench.TARGET.text());
        Rounds r = new Rounds("10.", "msg/s", null);
        for (int i = 0; i < 5; i++) {
            r.add(9_800).metric("p99", 20);
        }
        Target.Verdict v = DbBroadcastBench.TARGET.judge(r);
        assertFalse(v.met(), "9,800 msg/s must not meet ≥ 10,000 msg/s");
        assertTrue(v.why().startsWith("delivered ≥ 10,000 msg/s: median 9,800"), v.why());
        assertEquals("≥ 5× the reference's events/s, ≥ 10× fewer round trips", RlsBench.TARGET.text());
        assertEquals("≥ 0.9× the streaming ceiling", CdcRounds.VS_CEILING.text());
    }

    @Test
    void figureFivesRoundTripsAreChecked() {
        Rounds r = new Rounds("5.", "events/s", "reference");
        for (int i = 0; i < 5; i++) {
            r.add(6_000, 1_000, "").metric("fewer round trips", 8); // 6× the events/s, only 8× fewer round trips
        }
        Target.Verdict v = RlsBench.TARGET.judge(r);
        assertFalse(v.met());
        assertTrue(v.why().startsWith("≥ 10× fewer round trips: median 8"), v.why());
    }

    @Test
    void aTargetIsMetOnlyWhenTheMedianClearsItByTheRoundsNoise() {
        // 1.57× against 1.5× with rounds that disagree by more than 0.07: a coin flip, not met
        Rounds flip = new Rounds("1.", "rows/s", "Debezium");
        for (double v : new double[] {145, 157, 170, 150, 165}) {
            flip.add(v, 100, "");
        }
        Target.Verdict v = CdcRounds.VS_DEBEZIUM.judge(flip);
        assertFalse(v.met());
        assertTrue(v.why().contains("does not clear the bound by its noise"), v.why());
        Rounds clear = new Rounds("1.", "rows/s", "Debezium");
        for (double x : new double[] {156, 157, 158, 157, 156}) {
            clear.add(x, 100, "");
        }
        assertTrue(CdcRounds.VS_DEBEZIUM.judge(clear).met());
        // a maximum: p99 ≤ 50 ms needs median + MAD ≤ 50
        Rounds p = new Rounds("2.", "ms", null);
        for (double x : new double[] {40, 45, 48, 55, 60}) {
            p.add(x).metric("p50", 3);
        }
        assertFalse(LatencyBench.STREAM_1000.judge(p).met());
    }

    @Test
    void fewerThanFiveRoundsNeverMeetATarget() {
        Rounds r = new Rounds("1.", "rows/s", "Debezium")
                .add(300, 100, "")
                .add(300, 100, "")
                .add(300, 100, "");
        Target.Verdict v = CdcRounds.VS_DEBEZIUM.judge(r);
        assertFalse(v.met());
        assertTrue(v.why().contains("3 rounds, a verdict needs 5"), v.why());
    }

    @Test
    void aFigureMeasuredOnceIsJudgedOnItsValuesAndAMissingOneFails() {
        assertTrue(CdcThroughputBench.HUGE_TXN
                .judgeOnce(Map.of("live", 40.0, "missing", 0.0))
                .met());
        assertFalse(CdcThroughputBench.HUGE_TXN
                .judgeOnce(Map.of("live", 300.0, "missing", 0.0))
                .met());
        assertFalse(CdcThroughputBench.HUGE_TXN
                .judgeOnce(Map.of("live", Double.NaN, "missing", 0.0))
                .met());
        assertFalse(CdcThroughputBench.HUGE_TXN
                .judgeOnce(Map.of("live", 40.0, "missing", 10.0))
                .met());
        // the bound can fail: the heap the worker runs with is far above it
        assertTrue(CdcThroughputBench.HEAP_MAX_MB >= 4 * CdcThroughputBench.HEAP_BOUND_MB);
    }

    @Test
    void aRowWithoutABaselineSaysSoAndTheAnalysisSaysWhy() {
        Report report = new Report();
        report.info("x", "1", "–", "–", "–");
        assertEquals("– (no baseline: not given)", report.rows.get(0).baseline());
        Rounds r = complete(160, 170, 180, 175, 165);
        report.row(r, null, "Debezium: 100", CdcRounds.VS_DEBEZIUM);
        assertTrue(report.rows
                .get(1)
                .measured()
                .startsWith("median 170 rows/s (spread 160–180, 5 valid of 5 rounds); rounds: 160 / 170 / 180"));
        assertEquals(1, report.rounds.size());
        String analysis = RunAnalysis.render(report);
        assertTrue(analysis.contains("1 of 1 targets met"), analysis);
        assertTrue(analysis.contains("≥ 1.5× Debezium: median 1.7, noise (MAD) 0.05"), analysis);
    }
}
