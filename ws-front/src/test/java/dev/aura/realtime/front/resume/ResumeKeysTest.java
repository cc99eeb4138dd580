package dev.aura.realtime.front.resume;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Resume keys cannot be chosen to hit another project's or user's record. */
class ResumeKeysTest {
    private static final ResumeKeys.BindingKey A = new ResumeKeys.BindingKey("*", "todos", null, null);
    private static final ResumeKeys.BindingKey B = new ResumeKeys.BindingKey("INSERT", "notes", "id=eq.1", null);

    @Test
    void theKeyDependsOnProjectIdentityTopicAndBindingsButNotTheirOrder() {
        String k = ResumeKeys.record("p1", "sub:u1", "realtime:room", List.of(A, B));
        assertThat(ResumeKeys.record("p1", "sub:u1", "realtime:room", List.of(B, A)))
                .isEqualTo(k);
        assertThat(ResumeKeys.record("p2", "sub:u1", "realtime:room", List.of(A, B)))
                .isNotEqualTo(k);
        assertThat(ResumeKeys.record("p1", "sub:u2", "realtime:room", List.of(A, B)))
                .isNotEqualTo(k);
        assertThat(ResumeKeys.record("p1", "sub:u1", "realtime:other", List.of(A, B)))
                .isNotEqualTo(k);
        assertThat(ResumeKeys.record("p1", "sub:u1", "realtime:room", List.of(A)))
                .isNotEqualTo(k);
        assertThat(k).matches("[0-9a-f]{64}");
    }

    @Test
    void aResumeKeyNeverStandsForAJwtSubject() {
        assertThat(ResumeKeys.identity("u1", "u1")).isEqualTo("sub:u1");
        assertThat(ResumeKeys.identity(null, "u1")).isEqualTo("anon:u1");
        assertThat(ResumeKeys.identity(null, null)).isNull();
        // concatenation cannot collide: fields are length-prefixed
        assertThat(ResumeKeys.record("p", "sub:a", "realtime:bc", List.of(A)))
                .isNotEqualTo(ResumeKeys.record("p", "sub:ab", "realtime:c", List.of(A)));
    }

    @Test
    void hostileResumeKeysAndSinceValuesGetNoIdentityAndNoReplay() {
        assertThat(ResumeKeys.identity(null, "x".repeat(257)))
                .as("over 256 chars")
                .isNull();
        assertThat(ResumeKeys.identity(null, "")).isNull();
        assertThat(ResumeKeys.identity(null, "sub:victim"))
                .as("a resume_key spelled like a subject identity stays anonymous")
                .isEqualTo("anon:sub:victim")
                .isNotEqualTo(ResumeKeys.identity("victim", null));
        for (String since : new String[] {
            "", "not-an-id", "'; DROP TABLE x; --", "1/2:3".repeat(20), "FFFFFFFF/FFFFFFFF:99999999999999999999"
        }) {
            assertThat(EventIds.valid(since)).as(since).isFalse();
        }
        assertThat(EventIds.valid("0/16B3748:0")).isTrue();
        // parsed leniently as the earliest id (0/0:0, trailing text ignored as a view checksum would be):
        // it precedes every subscription's first event, so a join with it is told since_unknown
        assertThat(EventIds.compare("0/0:-1", "0/1:0")).isNegative();
    }
}
