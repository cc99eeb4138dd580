package dev.aura.realtime.front.resume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.auth.Claims;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

    private static Claims claims(String role, String sub, Map<String, Object> extra) {
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("role", role);
        all.put("ref", "p");
        all.put("iat", 1_700_000_000L + extra.hashCode() % 1000);
        all.put("exp", 1_800_000_000L);
        if (sub != null) {
            all.put("sub", sub);
        }
        all.putAll(extra);
        return new Claims(role, "p", sub, Instant.ofEpochSecond(1_800_000_000L), all, "{}");
    }

    @Test
    void aResumeKeyNeverStandsForAJwtSubject() {
        Claims u1 = claims("authenticated", "u1", Map.of());
        Claims anon = claims("anon", null, Map.of());
        assertThat(ResumeKeys.identity(u1, null)).isNotNull();
        assertThat(ResumeKeys.identity(anon, "u1")).isNotNull();
        assertThat(ResumeKeys.identity(anon, null)).as("no sub, no resume_key").isNull();
        assertThat(ResumeKeys.identity(anon, "u1").key())
                .isNotEqualTo(ResumeKeys.identity(u1, null).key());
        // concatenation cannot collide: fields are length-prefixed
        assertThat(ResumeKeys.record("p", "sub:a", "realtime:bc", List.of(A)))
                .isNotEqualTo(ResumeKeys.record("p", "sub:ab", "realtime:c", List.of(A)));
    }

    /** Issue 38: the service key's resume_key presented with the anon key, or by other anonymous claims, is another identity. */
    @Test
    void aResumeKeyNeverWidensAnIdentity() {
        Claims service = claims("service_role", null, Map.of());
        Claims anon = claims("anon", null, Map.of());
        Claims deviceA = claims("anon", null, Map.of("device", "a"));
        Claims deviceB = claims("anon", null, Map.of("device", "b"));
        assertThat(ResumeKeys.identity(anon, "backend-1").key())
                .isNotEqualTo(ResumeKeys.identity(service, "backend-1").key());
        assertThat(ResumeKeys.identity(deviceA, "k").key())
                .isNotEqualTo(ResumeKeys.identity(deviceB, "k").key());
        assertThat(ResumeKeys.identity(deviceA, "k").key())
                .as("the same claims in a refreshed token (other iat, exp): the same identity")
                .isEqualTo(ResumeKeys.identity(
                                claims("anon", null, Map.of("device", "a", "exp", 1_900_000_000L, "iat", 3L)), "k")
                        .key());
        Claims user = claims("authenticated", "u1", Map.of("aal", "aal1"));
        Claims stepUp = claims("authenticated", "u1", Map.of("aal", "aal2"));
        assertThat(ResumeKeys.identity(user, null).key())
                .as("a subject's identity is its role and sub")
                .isEqualTo(ResumeKeys.identity(stepUp, null).key());
        assertThat(ResumeKeys.identity(user, null).claimsDigest())
                .as("whose record only a token of the same claims adopts")
                .isNotEqualTo(ResumeKeys.identity(stepUp, null).claimsDigest());
        assertThat(ResumeKeys.identity(claims("service_role", "u1", Map.of()), null)
                        .key())
                .as("another role of the same sub")
                .isNotEqualTo(ResumeKeys.identity(claims("authenticated", "u1", Map.of()), null)
                        .key());
        assertThat(ResumeKeys.identity(user, "tab-2").key())
                .as("a resume_key with a sub narrows")
                .isNotEqualTo(ResumeKeys.identity(user, null).key());
        assertThat(ResumeKeys.claimsDigest(Map.of("a", Map.of("x", 1, "y", List.of("z")))))
                .as("nested claims in any key order")
                .isEqualTo(ResumeKeys.claimsDigest(
                        new TreeMap<>(Map.of("a", new TreeMap<>(Map.of("y", List.of("z"), "x", 1))))));
    }

    @Test
    void hostileResumeKeysAndSinceValuesGetNoIdentityAndNoReplay() {
        Claims anon = claims("anon", null, Map.of());
        assertThat(ResumeKeys.identity(anon, "x".repeat(257)))
                .as("over 256 chars")
                .isNull();
        assertThat(ResumeKeys.identity(anon, "")).isNull();
        assertThat(ResumeKeys.identity(anon, "sub:victim").key())
                .as("a resume_key spelled like a subject identity stays anonymous")
                .isNotEqualTo(ResumeKeys.identity(claims("anon", "victim", Map.of()), null)
                        .key());
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
