package dev.aura.realtime.cdc.rls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.cdc.event.View;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A binding's select narrows its view to the intersection with what its role may read; it never widens it. */
class SelectViewTest {
    @Test
    void selectIsIntersectedWithTheRolesColumnsAndKeepsTheOtherRules() {
        assertThat(ViewRules.select(View.FULL, List.of("id", "title")).columns())
                .containsExactly("id", "title");
        assertThat(ViewRules.select(new View(Set.of("id", "body"), false, List.of()), List.of("id", "title"))
                        .columns())
                .containsExactly("id");
        View keyOnly = ViewRules.select(View.OLD_RECORD_KEY_ONLY, List.of("title"));
        assertThat(keyOnly.oldRecordKeyOnly()).isTrue();
        assertThat(keyOnly.columns()).containsExactly("title");
        View unauthorized = ViewRules.select(ViewRules.UNAUTHORIZED_VIEW, List.of("id"));
        assertThat(unauthorized.columns()).isEmpty();
        assertThat(unauthorized.errors()).isEqualTo(ViewRules.UNAUTHORIZED_VIEW.errors());
        assertThat(ViewRules.select(View.FULL, List.of("id")).idSuffix())
                .as("a narrowed view is its own message, with its own event id")
                .isNotEmpty();
    }
}
