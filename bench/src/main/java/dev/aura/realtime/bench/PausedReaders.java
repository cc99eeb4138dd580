package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Figure 1's readers between their turns (issue 39, finding 4): a reader is SIGSTOPped, and its
 * walsender with it once idle ({@link WalSenderPause}), unless turned off to show what a paused
 * reader's walsender does on its own; and what each streaming reader's slot had been sent of each
 * backlog when its turn began ({@link SlotPosition}), summed up in one note.
 */
final class PausedReaders {
    private final Stack s;
    private final Function<WarmProcess, String> slotOf;
    private final boolean pauseWalSenders;
    private final Map<WarmProcess, WalSenderPause> walSenders = new LinkedHashMap<>();
    /** Per reader: how far into each backlog its slot had been sent when its turn began (0..1). */
    private final Map<String, List<Double>> sentAtResume = new LinkedHashMap<>();
    /** Per reader: the most bytes queued on its socket when a turn began. */
    private final Map<String, Long> queuedAtResume = new LinkedHashMap<>();

    /**
     * @param slotOf the slot a reader reads
     * @param pauseWalSenders whether a paused reader's walsender is paused too ({@code --no-walsender-pause}: not)
     */
    PausedReaders(Stack s, Function<WarmProcess, String> slotOf, boolean pauseWalSenders) {
        this.s = s;
        this.slotOf = slotOf;
        this.pauseWalSenders = pauseWalSenders;
    }

    /** Pauses the reader, then (unless off) its walsender. */
    void pause(WarmProcess w) {
        w.pause();
        if (pauseWalSenders) {
            walSenders
                    .computeIfAbsent(w, x -> new WalSenderPause(s, slotOf.apply(x)))
                    .stop();
        }
    }

    /** Resumes the reader's walsender, then the reader. */
    void resume(WarmProcess w) {
        WalSenderPause p = walSenders.get(w);
        if (p != null) {
            p.resume();
        }
        w.resume();
    }

    /** Lets every paused walsender run (before the readers are closed and their slots dropped). */
    void resumeWalSenders() {
        walSenders.values().forEach(WalSenderPause::resume);
    }

    /** Records where {@code reader}'s slot stood at its resume, for the backlog [from, to). */
    void atResume(String reader, SlotPosition p, long from, long to) {
        if (p.sent() >= 0) {
            sentAtResume.computeIfAbsent(reader, k -> new ArrayList<>()).add(p.into(from, to));
            queuedAtResume.merge(reader, Math.max(0, p.readerQueue()) + Math.max(0, p.senderQueue()), Math::max);
        }
    }

    /** The run's answer to finding 4, as a note; and how often a walsender could not be paused. */
    void note(Report report) {
        StringBuilder sb =
                new StringBuilder("CDC, paused readers (issue 39, finding 4): how much of each round's backlog"
                        + " a reader's walsender had already decoded and sent while the reader was SIGSTOPped, at the moment"
                        + " its turn began (median, max over the rounds of both shapes; the rest was read in its turn; "
                        + (pauseWalSenders
                                ? "the walsenders were paused with their readers"
                                : "--no-walsender-pause: the walsenders ran on while their readers were paused")
                        + "): ");
        for (Map.Entry<String, List<Double>> e : sentAtResume.entrySet()) {
            double[] v = e.getValue().stream()
                    .mapToDouble(Double::doubleValue)
                    .filter(d -> !Double.isNaN(d))
                    .toArray();
            sb.append(String.format(
                    "%s %.0f %% (max %.0f %%, up to %s queued on its socket); ",
                    e.getKey(),
                    100 * Rounds.median(v),
                    100 * Arrays.stream(v).max().orElse(Double.NaN),
                    SlotPosition.mb(queuedAtResume.getOrDefault(e.getKey(), 0L))));
        }
        report.note(sb.substring(0, sb.length() - 2) + " (poll has no walsender: its slot is read by SQL in its turn)");
        int missed =
                walSenders.values().stream().mapToInt(WalSenderPause::missed).sum();
        if (missed > 0) {
            report.note("CDC: " + missed + " times a paused reader's walsender was never idle long enough to be"
                    + " paused too (it ran on: see the paused readers' note)");
        }
    }
}
