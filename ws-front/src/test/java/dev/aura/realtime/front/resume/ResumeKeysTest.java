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
}
