package dev.aura.realtime.cdc.join;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The join-time rules of a postgres_changes binding, on a catalog held in memory. */
class BindingRulesTest {
    private static final String PROJECT = "6f1c0d52-0000-4000-8000-000000000001";
    private static final ProjectCatalog.ColumnType INT = new ProjectCatalog.ColumnType("int4", "integer");
    private static final ProjectCatalog.ColumnType TEXT = new ProjectCatalog.ColumnType("text", "text");

    /** Table {@code rooms(id int PRIMARY KEY, name text, secret text)}: anon may select id and name. */
    private TableSecurity.Facts facts = new TableSecurity.Facts(
            true,
            false,
            List.of("id"),
            List.of("integer"),
            new LinkedHashSet<>(List.of("id", "name", "secret")),
            Map.of(ClientRoles.ANON, Set.of("id", "name"), ClientRoles.AUTHENTICATED, Set.of("id", "name", "secret")),
            Set.of(ClientRoles.AUTHENTICATED));

    private static final TableSecurity.Facts MISSING =
            new TableSecurity.Facts(false, false, List.of(), List.of(), Set.of(), Map.of(), Set.of());

    private final BindingRules rules = new BindingRules(new BindingRules.Catalog() {
        @Override
        public Optional<String> schemaOf(UUID project) {
            return project.toString().equals(PROJECT) ? Optional.of("project_x") : Optional.empty();
        }

        @Override
        public boolean enabled(UUID project, String table) {
            return table.equals("rooms");
        }

        @Override
        public Optional<ProjectCatalog.ColumnType> columnType(String schema, String table, String column) {
            return switch (column) {
                case "id" -> Optional.of(INT);
                case "name", "secret" -> Optional.of(TEXT);
                default -> Optional.empty();
            };
        }

        @Override
        public TableSecurity.Facts facts(UUID project, String schema, String table) {
            return table.equals("rooms") || table.equals("other") ? facts : MISSING;
        }
    });

    private BindingRules.Outcome judge(String table, String filter, String event, String role) throws Exception {
        return rules.judge(new SubscriptionCheck.Request(PROJECT, table, filter, event, role));
    }

    private static String refusal(BindingRules.Outcome o) {
        assertThat(o).isInstanceOf(BindingRules.Outcome.Refused.class);
        return ((BindingRules.Outcome.Refused) o).reason();
    }

    @Test
    void unknownOrUnregisteredProjectsAndRolesAreRefusedWithSupabasesCodes() throws Exception {
        assertThat(refusal(rules.judge(new SubscriptionCheck.Request("nope", "rooms", null))))
                .startsWith("Unauthorized: unknown project");
        assertThat(refusal(rules.judge(
                        new SubscriptionCheck.Request(UUID.randomUUID().toString(), "rooms", null))))
                .startsWith("RealtimeDisabledForConfiguration:");
        assertThat(refusal(judge("rooms", null, "*", "postgres"))).startsWith("Unauthorized: role 'postgres'");
        assertThat(refusal(judge("other", null, "*", "anon"))).startsWith("RealtimeDisabledForConfiguration:");
        assertThat(refusal(judge("*", "id=eq.1", "*", "anon"))).contains("a filter needs a table");
    }

    @Test
    void aFilterOnAColumnTheRoleMayNotSelectIsRefusedAndTheRoleMayReadItsOwn() throws Exception {
        assertThat(refusal(judge("rooms", "secret=eq.x", "*", "anon")))
                .isEqualTo(
                        "PostgresChangesInvalidFilter: invalid column for filter secret: role anon may not select it;"
                                + " missing grant: grant select (secret) on project_x.rooms to"
                                + " project_6f1c0d52_0000_4000_8000_000000000001_anon");
        BindingRules.Outcome ok = judge("rooms", "secret=eq.x", "*", "authenticated");
        assertThat(ok).isInstanceOf(BindingRules.Outcome.Valid.class);
        BindingRules.Outcome.Valid valid = (BindingRules.Outcome.Valid) ok;
        assertThat(valid.castRole()).isEqualTo(ClientRoles.AUTHENTICATED);
        assertThat(valid.firstType()).isEqualTo("text");
        assertThat(valid.casts()).containsExactly(new BindingRules.Cast("secret", "x", TEXT));
    }

    @Test
    void aRoleThatMayNotSelectTheKeyIsAcceptedAndToldWhichGrantIsMissing() throws Exception {
        facts = new TableSecurity.Facts(
                true,
                false,
                facts.pkColumns(),
                facts.pkTypes(),
                facts.columns(),
                Map.of(ClientRoles.ANON, Set.of("name"), ClientRoles.AUTHENTICATED, Set.of("id", "name", "secret")),
                Set.of(ClientRoles.AUTHENTICATED));
        for (String filter : new String[] {null, "name=eq.x"}) {
            BindingRules.Outcome o = judge("rooms", filter, "*", "anon");
            assertThat(o).isInstanceOf(BindingRules.Outcome.Valid.class);
            assertThat(((BindingRules.Outcome.Valid) o).notice())
                    .isEqualTo("PostgresChangesUnauthorized: role anon may not select the primary key of rooms, so"
                            + " its changes arrive as \"Error 401: Unauthorized\" without values; missing grant:"
                            + " grant select on project_x.rooms to project_6f1c0d52_0000_4000_8000_000000000001_anon");
        }
        assertThat(((BindingRules.Outcome.Valid) judge("rooms", null, "*", "authenticated")).notice())
                .isNull();
        assertThat(((BindingRules.Outcome.Valid) judge("rooms", null, "*", "service_role")).notice())
                .isNull();
    }

    @Test
    void theMissingGrantQuotesNamesSqlWouldNotTakeBare() {
        UUID project = UUID.fromString(PROJECT);
        assertThat(BindingRules.missingGrant(project, "project_x", "Rooms", "user", ClientRoles.AUTHENTICATED))
                .isEqualTo("grant select (\"user\") on project_x.\"Rooms\" to"
                        + " project_6f1c0d52_0000_4000_8000_000000000001_authenticated");
        assertThat(BindingRules.ident("a\"b")).isEqualTo("\"a\"\"b\"");
        assertThat(BindingRules.ident("room_2")).isEqualTo("room_2");
    }

    @Test
    void deleteBindingsOnRlsTablesFilterByTheKeyOnlyAndStarBindingsAreToldTheyGetNoDelete() throws Exception {
        facts = new TableSecurity.Facts(
                true,
                true,
                facts.pkColumns(),
                facts.pkTypes(),
                facts.columns(),
                facts.selectable(),
                facts.selectsTable());
        assertThat(refusal(judge("rooms", "name=eq.a", "DELETE", "anon")))
                .startsWith("PostgresChangesInvalidFilter: invalid column for DELETE filter name:");
        BindingRules.Outcome.Valid star = (BindingRules.Outcome.Valid) judge("rooms", "name=eq.a", "*", "anon");
        assertThat(star.notice()).startsWith("PostgresChangesDeleteNotDelivered:");
        BindingRules.Outcome.Valid byKey = (BindingRules.Outcome.Valid) judge("rooms", "id=in.(1,2)", "DELETE", "anon");
        assertThat(byKey.notice()).isNull();
        assertThat(byKey.casts()).extracting(BindingRules.Cast::value).containsExactly("1", "2");
    }

    @Test
    void aTableNotEnabledSaysWhetherItExistsAndHowToEnableOne() throws Exception {
        String params = "Unable to subscribe to changes with given parameters. Please check Realtime is enabled for"
                + " the given connect parameters: [schema: public, table: %s, filters: []]";
        String enable = "PUT /v1/db/" + PROJECT + "/schema/tables/%s/realtime {\"enabled\": true} on the"
                + " cdc-worker's control API (scripts/stack.sh enable %s on the local stack)";
        assertThat(refusal(judge("other", null, "*", "anon")))
                .isEqualTo("RealtimeDisabledForConfiguration: " + params.formatted("other")
                        + " (table other is not enabled for realtime; enable it with "
                        + enable.formatted("other", "other") + ")");
        assertThat(refusal(judge("ghost", null, "*", "anon")))
                .isEqualTo("RealtimeDisabledForConfiguration: " + params.formatted("ghost")
                        + " (there is no table ghost in this project; create it, then enable it with "
                        + enable.formatted("ghost", "ghost") + ")");
    }

    @Test
    void unknownColumnsInFilterOrSelectAreRefused() throws Exception {
        assertThat(refusal(judge("rooms", "nope=eq.1", "*", "anon")))
                .isEqualTo("PostgresChangesInvalidFilter: invalid column for filter nope: rooms has no column nope;"
                        + " the columns role anon may select: id, name");
        assertThat(refusal(judge("rooms", "nope=eq.1", "*", "authenticated")))
                .isEqualTo("PostgresChangesInvalidFilter: invalid column for filter nope: rooms has no column nope;"
                        + " the columns role authenticated may select: id, name, secret");
        assertThat(refusal(judge("rooms", "nope=eq.1", "*", "service_role")))
                .isEqualTo("PostgresChangesInvalidFilter: invalid column for filter nope: rooms has no column nope;"
                        + " its columns: id, name, secret");
        assertThat(refusal(rules.judge(
                        new SubscriptionCheck.Request(PROJECT, "rooms", null, "*", "anon", List.of("id", "nope")))))
                .isEqualTo("PostgresChangesInvalidFilter: invalid column in select nope");
    }
}
