package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.lsn.Lsn;
import java.util.Comparator;

/**
 * Order of change event ids {@code <commit LSN>:<ordinal>[view suffix]} (docs/design.md C4): by
 * commit LSN, then ordinal, then the whole text (views of one change). The cdc-worker publishes a
 * project's changes in this order, so within one project a smaller id was published earlier.
 */
public final class EventIds {
    /** Compares two ids; an unparsable id sorts first. */
    public static final Comparator<String> ORDER = EventIds::compare;

    private EventIds() {}

    public static int compare(String a, String b) {
        long[] x = parse(a);
        long[] y = parse(b);
        int c = Long.compareUnsigned(x[0], y[0]);
        if (c != 0) {
            return c;
        }
        c = Long.compare(x[1], y[1]);
        return c != 0 ? c : a.compareTo(b);
    }

    /** Whether {@code id} comes strictly after {@code after} (null: everything does). */
    public static boolean after(String id, String after) {
        return after == null || compare(id, after) > 0;
    }

    /** {LSN, ordinal}; {0, -1} for an id that does not parse. */
    static long[] parse(String id) {
        if (id == null) {
            return new long[] {0, -1};
        }
        int colon = id.indexOf(':');
        if (colon <= 0) {
            return new long[] {0, -1};
        }
        try {
            long lsn = Lsn.parse(id.substring(0, colon)).value();
            int end = colon + 1;
            while (end < id.length() && Character.isDigit(id.charAt(end))) {
                end++;
            }
            long ordinal = end == colon + 1 ? 0 : Long.parseLong(id.substring(colon + 1, end));
            return new long[] {lsn, ordinal};
        } catch (RuntimeException e) {
            return new long[] {0, -1};
        }
    }

    /** Whether {@code id} has the {@code <LSN>:<ordinal>} form (a client's {@code since}). */
    public static boolean valid(String id) {
        return id != null && id.length() <= 64 && parse(id)[1] >= 0;
    }
}
