package dev.aura.realtime.common.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Issue 9: the subject token codec is a bijection onto NATS-safe tokens, for any Java string. */
class SubjectsPropertiesTest {

    @Provide
    Arbitrary<String> anyText() {
        // every char including lone surrogates, plus the characters NATS cares about
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(40),
                Arbitraries.strings()
                        .withChars(".*> \t~-_aZ9\u00e9\ud83d\ude00\ud800\udc00")
                        .ofMaxLength(20));
    }

    @Property(tries = 2000)
    void everyStringRoundTripsThroughOneSafeToken(@ForAll("anyText") String name) {
        String token = Subjects.encodeToken(name);
        assertThat(token).isNotEmpty().matches("[A-Za-z0-9_~-]+");
        assertThat(Subjects.decodeToken(token)).isEqualTo(name);
    }

    @Property(tries = 1000)
    void distinctNamesNeverShareASubject(@ForAll("anyText") String a, @ForAll("anyText") String b) {
        if (!a.equals(b)) {
            assertThat(Subjects.changes("p", a)).isNotEqualTo(Subjects.changes("p", b));
        }
    }

    @Property(tries = 1000)
    void subjectsParseBackToProjectAndName(@ForAll("anyText") String project, @ForAll("anyText") String topic) {
        Subjects.Parsed parsed = Subjects.parse(Subjects.broadcast(project, topic));
        assertThat(parsed).isEqualTo(new Subjects.Parsed("broadcast", project, topic));
    }

    @Property(tries = 2000)
    void garbageTokensEitherDecodeOrFailWithIllegalArgument(@ForAll("anyText") String garbage) {
        try {
            String decoded = Subjects.decodeToken(garbage);
            assertThat(decoded).isNotNull();
        } catch (IllegalArgumentException expected) {
            // the only failure a receiver must handle
        }
    }

    @Property(tries = 200)
    void aLoneSurrogateIsNotConfusedWithAQuestionMark(@ForAll("anyText") String prefix) {
        assertThat(Subjects.encodeToken(prefix + "\ud800")).isNotEqualTo(Subjects.encodeToken(prefix + "?"));
        assertThatThrownBy(() -> Subjects.decodeToken("~~0041")).isInstanceOf(IllegalArgumentException.class);
    }
}
