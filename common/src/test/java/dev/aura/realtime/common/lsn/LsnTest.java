package dev.aura.realtime.common.lsn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** {@link Lsn}: the pg_lsn text form round-trips, and order is unsigned like Postgres's. */
class LsnTest {
    @Property
    void formatThenParseIsTheIdentity(@ForAll long value) {
        Lsn lsn = new Lsn(value);
        assertThat(Lsn.parse(lsn.toString())).isEqualTo(lsn);
        assertThat(lsn.toString()).matches("[0-9A-F]{1,8}/[0-9A-F]{1,8}");
    }

    @Property
    void parseAcceptsLowerCaseAndLeadingZeros(@ForAll long value) {
        String hi = String.format("%08x", value >>> 32);
        String lo = String.format("%08x", value & 0xFFFFFFFFL);
        assertThat(Lsn.parse(hi + "/" + lo).value()).isEqualTo(value);
    }

    @Property
    void orderIsUnsignedAndConsistentWithBytesAfter(@ForAll long a, @ForAll long b) {
        Lsn x = new Lsn(a);
        Lsn y = new Lsn(b);
        assertThat(Integer.signum(x.compareTo(y))).isEqualTo(Integer.signum(Long.compareUnsigned(a, b)));
        assertThat(x.isAfter(y)).isEqualTo(Long.compareUnsigned(a, b) > 0);
        assertThat(x.compareTo(y)).isEqualTo(-y.compareTo(x));
        assertThat(y.bytesAfter(x) + x.value()).isEqualTo(y.value());
    }

    @Example
    void postgresExamples() {
        assertThat(Lsn.parse("16/B374D848").value()).isEqualTo(0x16B374D848L);
        assertThat(Lsn.parse("0/0")).isEqualTo(Lsn.ZERO);
        assertThat(Lsn.parse("FFFFFFFF/FFFFFFFF").isAfter(Lsn.parse("0/1"))).isTrue();
        assertThat(Lsn.parse("0/3000000").bytesAfter(Lsn.parse("0/1000000"))).isEqualTo(0x2000000L);
    }

    @Example
    void malformedTextIsRejected() {
        for (String bad :
                new String[] {"", "/", "0/", "/0", "1", "123456789/0", "0/123456789", "G/0", "0/-1", "1//2"}) {
            assertThatThrownBy(() -> Lsn.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> Lsn.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
