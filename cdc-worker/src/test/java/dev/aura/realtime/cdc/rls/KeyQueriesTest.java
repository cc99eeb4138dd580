package dev.aura.realtime.cdc.rls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyQueriesTest {
    private final KeyChecks.KeyedTable composite = new KeyChecks.KeyedTable(
            "project_a", "ev\"ents", List.of("id", "at"), List.of("integer", "timestamp with time zone"));

    @Test
    void theBatchComparesTypedValuesColumnByColumnAndAnswersOrdinals() {
        assertThat(KeyQueries.batch(composite, 3))
                .isEqualTo("SELECT ARRAY[k.i::text] FROM unnest((($1)[1:3])::integer[],"
                        + " (($1)[4:6])::timestamp with time zone[]) WITH ORDINALITY AS k(v0, v1, i)"
                        + " WHERE EXISTS (SELECT 1 FROM \"project_a\".\"ev\"\"ents\" AS t"
                        + " WHERE t.\"id\" = ANY((($1)[1:3])::integer[])"
                        + " AND t.\"at\" = ANY((($1)[4:6])::timestamp with time zone[])"
                        + " AND t.\"id\" = k.v0 AND t.\"at\" = k.v1)");
    }

    @Test
    void aOneColumnKeyIsLookedUpByTheIndexAndAnswersItsOrdinal() {
        KeyChecks.KeyedTable t =
                new KeyChecks.KeyedTable("project_a", "notes", List.of("at"), List.of("timestamp(3) with time zone"));
        assertThat(KeyQueries.batch(t, 2))
                .isEqualTo(
                        "SELECT ARRAY[array_position(($1)::timestamp(3) with time zone[], t.\"at\")::text]"
                                + " FROM \"project_a\".\"notes\" AS t WHERE t.\"at\" = ANY(($1)::timestamp(3) with time zone[])");
    }

    @Test
    void theSingleKeyQueryTakesItsValuesAsParameters() {
        assertThat(KeyQueries.single(composite))
                .isEqualTo("SELECT EXISTS (SELECT 1 FROM \"project_a\".\"ev\"\"ents\" WHERE \"id\" = ($1)[1]::integer"
                        + " AND \"at\" = ($1)[2]::timestamp with time zone)");
    }
}
