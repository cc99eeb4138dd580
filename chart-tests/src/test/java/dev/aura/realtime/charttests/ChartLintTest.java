package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ChartLintTest {

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void lintsCleanUnderStrict(Scenario scenario) {
        var result = ChartFixture.lintStrict(scenario);
        assertThat(result.isFailed())
                .as("helm lint --strict (%s): %s", scenario, result.getMessages())
                .isFalse();
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void rendersDocumentsThatAllParseIntoTheTypedModel(Scenario scenario) {
        var rendered = ChartFixture.render(scenario);
        assertThat(rendered.resources).isNotEmpty();
        assertThat(rendered.resources)
                .allSatisfy(r -> assertThat(r.getMetadata().getName()).isNotBlank());
    }
}
