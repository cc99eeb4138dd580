package dev.aura.realtime.cdc.decode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The streaming decoder: values as undecoded slices of the row, whatever the key order or escaping. */
class Wal2JsonDecoderTest {
    private static final Lsn AT = Lsn.parse("0/16B3748");
    private final Wal2JsonDecoder decoder = new Wal2JsonDecoder();

    private RowChange change(String row) throws Exception {
        EventFixture.decode(
                decoder,
                AT,
                "{\"action\":\"B\",\"xid\":4294967301,\"lsn\":\"0/16B3700\",\"nextlsn\":\"0/16B3800\",\"timestamp\":\"2026-01-02 03:04:05.5+00\"}");
        // the row sits in the middle of a larger array: slices are absolute positions
        byte[] padded = ("xx" + row + "yy").getBytes(StandardCharsets.UTF_8);
        WalMessage m = decoder.decode(AT, padded, 2, padded.length - 4);
        return ((WalMessage.Change) m).change();
    }

    @Test
    void stringsStayEscapedSlicesAndDecodeToTheirText() throws Exception {
        RowChange c = change("{\"action\":\"I\",\"schema\":\"s\",\"table\":\"t\",\"columns\":["
                + "{\"name\":\"a\",\"typeoid\":25,\"value\":\"say \\\"hi\\\"\\n😀, \\\\ }\"},"
                + "{\"name\":\"n\",\"typeoid\":1700,\"value\":123456789012345678901234567890.5},"
                + "{\"name\":\"b\",\"typeoid\":16,\"value\":true},{\"name\":\"z\",\"typeoid\":25,\"value\":null}],"
                + "\"pk\":[{\"name\":\"a\",\"typeoid\":25}]}");
        assertThat(c.action()).isEqualTo('I');
        assertThat(c.commitLsn()).isEqualTo(Lsn.parse("0/16B3700"));
        assertThat(c.commitTimestamp()).isEqualTo("2026-01-02T03:04:05.5Z");
        assertThat(c.xid())
                .as("the B row's xid (include-xids), for the checks' visibility wait")
                .isEqualTo(4294967301L);
        RawValue a = c.columns().get(0).value();
        assertThat(a.kind()).isEqualTo(RawValue.Kind.STRING);
        assertThat(a.plainString()).isFalse();
        assertThat(a.text()).isEqualTo("say \"hi\"\n😀, \\ }");
        assertThat(c.columns().get(1).value().text()).isEqualTo("123456789012345678901234567890.5");
        assertThat(c.columns().get(2).value()).isSameAs(RawValue.TRUE);
        assertThat(c.columns().get(3).value()).isSameAs(RawValue.NULL);
        assertThat(c.pk()).containsExactly("a");
        assertThat(c.cut()).isFalse();
    }

    @Test
    void keysInAnyOrderWithSpacesAsPostgresJsonPrintsThem() throws Exception {
        RowChange c = change("{\"columns\": [{\"value\": \"v1\", \"name\": \"a\", \"typeoid\": 25}, "
                + "{\"name\": \"b\", \"value\": \"v2\" , \"typeoid\": 25}], \"table\": \"t\", \"action\": \"U\", "
                + "\"identity\": [{\"name\": \"a\", \"typeoid\": 25, \"value\": \"old\"}], \"schema\": \"s\"}");
        assertThat(c.columns()).extracting(col -> col.value().text()).containsExactly("v1", "v2");
        assertThat(c.identity().get(0).value().text()).isEqualTo("old");
        assertThat(c.table()).isEqualTo("t");
    }

    @Test
    void aRowCutByPostgresMarksTheRowAndItsCutValues() throws Exception {
        RowChange c = change("{\"action\" : \"I\", \"schema\" : \"s\", \"table\" : \"t\", \"pk\" : null, \"columns\" : "
                + "[{\"name\":\"id\",\"typeoid\":23,\"value\":1}, {\"name\" : \"body\", \"typeoid\" : 25, \"cut\" : true}], "
                + "\"identity\" : null, \"aura_cut_bytes\" : 314572800}");
        assertThat(c.cut()).isTrue();
        assertThat(c.columns().get(1).value()).isSameAs(RawValue.CUT);
        assertThat(c.identity()).isEmpty();
    }

    @Test
    void aHugeStringIsSkippedNotCopied() throws Exception {
        String big = "x".repeat(30_000_000); // beyond Jackson's default 20M-character limit
        RowChange c = change(
                "{\"action\":\"I\",\"schema\":\"s\",\"table\":\"t\",\"columns\":[{\"name\":\"b\",\"typeoid\":25,\"value\":\""
                        + big + "\"}]}");
        assertThat(c.columns().get(0).value().byteLength()).isEqualTo(big.length());
        assertThat(c.rowBytes()).isGreaterThan(big.length());
    }
}
