package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The "unknown field" check must itself bite, or every other test here proves less than it says. */
class StrictModelTest {

    @Test
    void rejectsAMisspeltFieldDeepInAPodTemplate() {
        String yaml = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: x}
                spec:
                  selector: {matchLabels: {a: b}}
                  template:
                    metadata: {labels: {a: b}}
                    spec:
                      containers:
                        - name: c
                          image: i
                          readinesProbe: {httpGet: {path: /health, port: 80}}
                """;
        assertThatThrownBy(() -> RenderedManifests.parse(yaml))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("containers[0]")
                .hasMessageContaining("readinesProbe");
    }

    @Test
    void rejectsAPodLevelFieldPutOnAContainerSecurityContext() {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata: {name: x}
                spec:
                  containers:
                    - name: c
                      image: i
                      securityContext: {fsGroup: 10001}
                """;
        assertThatThrownBy(() -> RenderedManifests.parse(yaml)).hasMessageContaining("fsGroup");
    }
}
