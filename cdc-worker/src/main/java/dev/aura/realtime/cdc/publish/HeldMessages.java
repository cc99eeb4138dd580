package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.event.HeldChange;
import dev.aura.realtime.cdc.event.Quarantined;
import dev.aura.realtime.cdc.event.RawRow;
import dev.aura.realtime.cdc.failure.RowFault;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.api.MessageInfo;
import io.nats.client.impl.Headers;

/**
 * How a held change is written into a JetStream message and read back ({@link ProjectStreams}):
 * the wal2json row is the body, what decoding it again needs and why it is held are headers.
 */
final class HeldMessages {
    private HeldMessages() {}

    static final String TIMESTAMP = "Aura-Commit-Timestamp";
    static final String TABLE = "Aura-Table";
    static final String UNDECODABLE = "Aura-Undecodable";
    static final String FAULT = "Aura-Fault";
    static final String STAGE = "Aura-Stage";
    static final String DETAIL = "Aura-Detail";
    static final String PART = "Aura-Part";
    static final String XID = "Aura-Xid";

    static Headers headers(HeldChange c, Quarantined why) {
        Headers h = new Headers()
                .add(AuraHeaders.EVENT_ID, c.eventId())
                .add(TIMESTAMP, String.valueOf(c.commitTimestamp()))
                .add(TABLE, Subjects.encodeToken(c.table()));
        if (c.undecodable() != null) {
            h.add(UNDECODABLE, c.undecodable());
        }
        if (c.xid() != 0) {
            h.add(XID, Long.toString(c.xid()));
        }
        if (why != null) {
            h.add(FAULT, why.fault().code()).add(STAGE, why.stage()).add(DETAIL, headerSafe(why.detail()));
        }
        return h;
    }

    /** A header value of our own words: printable ASCII, at most 512 characters. */
    private static String headerSafe(String s) {
        String t = String.valueOf(s).replaceAll("[^\\x20-\\x7e]", "?");
        return t.length() > 512 ? t.substring(0, 512) : t;
    }

    static ProjectStreams.Stored stored(long seq, long lastSeq, MessageInfo m, byte[] row, String projectId) {
        Headers h = m.getHeaders();
        String fault = header(h, FAULT);
        Quarantined why = fault == null
                ? null
                : new Quarantined(RowFault.ofCode(fault), String.valueOf(header(h, STAGE)), header(h, DETAIL));
        String table = header(h, TABLE);
        HeldChange change = new HeldChange(
                projectId,
                header(h, AuraHeaders.EVENT_ID),
                header(h, TIMESTAMP),
                table == null ? "" : Subjects.decodeToken(table),
                RawRow.of(row),
                header(h, UNDECODABLE),
                xid(header(h, XID)));
        return new ProjectStreams.Stored(seq, lastSeq, change, why, m.getTime(), row.length);
    }

    private static long xid(String text) {
        try {
            return text == null ? 0 : Long.parseLong(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static String header(Headers h, String name) {
        return h == null ? null : h.getFirst(name);
    }
}
