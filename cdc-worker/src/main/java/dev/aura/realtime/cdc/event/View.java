package dev.aura.realtime.cdc.event;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.CRC32;

/**
 * How one group of subscribers sees a change (docs/design.md C7): which columns of
 * {@code record}, {@code old_record} and {@code columns} it receives, whether {@code old_record}
 * is cut to the primary key (a DELETE on an RLS table cannot be checked, so only the key is
 * revealed), and errors reported in the payload's {@code errors}. The access policy decides a
 * view per subscriber; subscribers with equal views share one published message.
 *
 * @param columns the column names the group may receive (sorted), or null for every column
 * @param oldRecordKeyOnly whether {@code old_record} keeps only the primary-key columns
 * @param errors Supabase-style errors for the payload's {@code errors} (e.g. {@code Error 401:
 *     Unauthorized}); never null
 */
public record View(Set<String> columns, boolean oldRecordKeyOnly, List<String> errors) {
    /** Every column, nothing cut, no error: what a subscriber of a table without RLS gets. */
    public static final View FULL = new View(null, false, List.of());
    /** Every column of {@code record}, {@code old_record} cut to the primary key. */
    public static final View OLD_RECORD_KEY_ONLY = new View(null, true, List.of());

    public View {
        columns = columns == null ? null : Collections.unmodifiableSet(new TreeSet<>(columns));
        errors = errors == null ? List.of() : List.copyOf(errors);
    }

    /** True for {@link #FULL}: the built event is published as it is. */
    public boolean full() {
        return columns == null && !oldRecordKeyOnly && errors.isEmpty();
    }

    /**
     * The suffix that makes a message's event id unique per view of one change and stable across
     * re-deliveries of it (receivers drop duplicates by id): empty for {@link #FULL}, else
     * {@code :} and a checksum of the view.
     */
    public String idSuffix() {
        if (full()) {
            return "";
        }
        CRC32 crc = new CRC32();
        crc.update(toString().getBytes(StandardCharsets.UTF_8));
        return ":" + Long.toHexString(crc.getValue());
    }
}
