package dev.aura.realtime.common.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** What the cdc-worker refuses to match (docs/design.md C8): anything but a well-formed, self-consistent entry. */
class SubscriptionEntryTest {
    private static final String PROJECT = "6f1c2a52-7c1e-4a59-9d1d-3f0d7c0a1b2c";
    private static final String OTHER = "0b7c53a8-9f55-4a1a-8c4f-2f6b2a4e2d11";
    private static final String SUB = "5d7e9a10-1b2c-4d3e-8f90-a1b2c3d4e5f6";

    @Test
    void aWellFormedEntryUnderItsOwnKeyIsValid() {
        assertThat(entry(PROJECT, "messages", "INSERT", "id=eq.1", "authenticated", claims("authenticated", PROJECT))
                        .problem(SubscriptionEntry.key(PROJECT, SUB)))
                .isNull();
        assertThat(entry(PROJECT, "*", "*", null, "service_role", claims("service_role", PROJECT))
                        .problem(SubscriptionEntry.key(PROJECT, SUB)))
                .isNull();
    }

    @Test
    void anEntryCannotReachAProjectOtherThanItsKeyAndItsToken() {
        SubscriptionEntry victims = entry(PROJECT, "t", "*", null, "anon", claims("anon", PROJECT));
        assertThat(victims.problem(SubscriptionEntry.key(OTHER, SUB))).contains("is not <project_id>.<sub_id>");
        assertThat(entry(PROJECT, "t", "*", null, "service_role", claims("service_role", OTHER))
                        .problem(SubscriptionEntry.key(PROJECT, SUB)))
                .contains("claims' project");
        ObjectNode projectIdClaim =
                JsonNodeFactory.instance.objectNode().put("role", "anon").put("project_id", PROJECT);
        assertThat(entry(PROJECT, "t", "*", null, "anon", projectIdClaim).problem(SubscriptionEntry.key(PROJECT, SUB)))
                .as("project_id when there is no ref, as the JWT verifier reads it")
                .isNull();
    }

    @Test
    void unknownRolesEventsAndRolesDifferingFromTheClaimsAreRefused() {
        String key = SubscriptionEntry.key(PROJECT, SUB);
        assertThat(entry(PROJECT, "t", "*", null, "postgres", claims("postgres", PROJECT))
                        .problem(key))
                .contains("role must be one of");
        assertThat(entry(PROJECT, "t", "*", null, "service_role", claims("anon", PROJECT))
                        .problem(key))
                .contains("claims' role");
        assertThat(entry(PROJECT, "t", "TRUNCATE", null, "anon", claims("anon", PROJECT))
                        .problem(key))
                .contains("event");
    }

    @Test
    void sizesAndFiltersAreBounded() {
        String key = SubscriptionEntry.key(PROJECT, SUB);
        assertThat(entry(PROJECT, "x".repeat(64), "*", null, "anon", claims("anon", PROJECT))
                        .problem(key))
                .contains("table");
        assertThat(entry(PROJECT, "t", "*", "id=nope.%", "anon", claims("anon", PROJECT))
                        .problem(key))
                .contains("filter does not parse");
        assertThat(entry(PROJECT, "t", "*", "id=eq." + "1".repeat(20_000), "anon", claims("anon", PROJECT))
                        .problem(key))
                .contains("filter longer");
        assertThat(new SubscriptionEntry(SUB, PROJECT, "t", "*", null, "anon", claims("anon", PROJECT), 1, null)
                        .problem(key))
                .contains("instance");
        assertThat(new SubscriptionEntry("a.b", PROJECT, "t", "*", null, "anon", claims("anon", PROJECT), 1, "f")
                        .problem(SubscriptionEntry.key(PROJECT, "a.b")))
                .contains("sub_id");
    }

    private static ObjectNode claims(String role, String project) {
        return JsonNodeFactory.instance.objectNode().put("role", role).put("ref", project);
    }

    private static SubscriptionEntry entry(
            String project, String table, String event, String filter, String role, ObjectNode claims) {
        return new SubscriptionEntry(SUB, project, table, event, filter, role, claims, 4_102_444_800_000L, "front-1");
    }
}
