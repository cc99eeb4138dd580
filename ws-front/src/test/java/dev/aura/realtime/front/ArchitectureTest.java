package dev.aura.realtime.front;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.aura.realtime.front.log.LogCode;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/**
 * ws-front's package graph points one way (docs/architecture.md):
 *
 * <pre>
 * front (FrontApp, WsFrontMain: wiring)
 *   → transport (Netty server, pipelines, HTTP routing, SSE)
 *   → session (connections, joins, channel lifecycle, limits)
 *   → fanout, presence, history
 *   → protocol (Phoenix codec, vsn 1/2, SSE events), relay (NATS)
 *   → config, metrics, log
 * </pre>
 *
 * A class may use its own layer and any layer below; an upward dependency or a cycle between
 * packages fails here.
 */
class ArchitectureTest {
    private static final String FRONT = "dev.aura.realtime.front";
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(FRONT);

    @Test
    void dependenciesPointDownTheLayers() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("wiring")
                .definedBy(FRONT)
                .layer("transport")
                .definedBy(FRONT + ".transport..")
                .layer("session")
                .definedBy(FRONT + ".session..")
                .layer("features")
                .definedBy(FRONT + ".fanout..", FRONT + ".presence..", FRONT + ".history..")
                .layer("wire")
                .definedBy(FRONT + ".protocol..", FRONT + ".relay..")
                .layer("base")
                .definedBy(FRONT + ".config..", FRONT + ".metrics..", FRONT + ".log..")
                .whereLayer("wiring")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("transport")
                .mayOnlyBeAccessedByLayers("wiring")
                .whereLayer("session")
                .mayOnlyBeAccessedByLayers("wiring", "transport")
                .whereLayer("features")
                .mayOnlyBeAccessedByLayers("wiring", "transport", "session")
                .whereLayer("wire")
                .mayOnlyBeAccessedByLayers("wiring", "transport", "session", "features")
                .check(MAIN);
    }

    @Test
    void packagesHaveNoCycles() {
        slices().matching(FRONT + ".(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void onlyRelayAndPresenceTalkToNats() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        FRONT + ".transport..",
                        FRONT + ".session..",
                        FRONT + ".fanout..",
                        FRONT + ".history..",
                        FRONT + ".protocol..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.nats..")
                .check(MAIN);
    }

    @Test
    void channelHandlersUseRelayAndPresenceThroughInterfacesOnly() {
        noClasses()
                .that()
                .resideInAPackage(FRONT + ".session..")
                .should()
                .dependOnClassesThat(DescribedPredicate.describe(
                        "implementations in relay or presence",
                        (JavaClass c) -> (c.getPackageName().equals(FRONT + ".relay")
                                        || c.getPackageName().equals(FRONT + ".presence"))
                                && !c.isInterface()
                                && c.getEnclosingClass()
                                        .map(e -> !e.isInterface())
                                        .orElse(true)))
                .check(MAIN);
    }

    @Test
    void everyWarningAndErrorIsLoggedWithItsCode() {
        noClasses()
                .that()
                .doNotBelongToAnyOf(LogCode.class)
                .should()
                .callMethodWhere(DescribedPredicate.<JavaMethodCall>describe(
                        "Logger.warn or Logger.error",
                        call -> call.getTargetOwner().isAssignableTo(Logger.class)
                                && (call.getName().equals("warn")
                                        || call.getName().equals("error"))))
                .as("WARN and ERROR lines are logged through LogCode, so each starts with its [Code]")
                .check(MAIN);
    }
}
