package dev.aura.realtime.front;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.aura.realtime.front.log.LogCode;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/**
 * ws-front's package graph points one way (docs/architecture.md):
 *
 * <pre>
 * 0  front (FrontApp, WsFrontMain: wiring only)
 * 1  transport (Netty server, pipelines, HTTP routing, SSE, REST broadcast endpoint)
 * 2  channel (the Phoenix channel: routing a connection's events, membership, lifecycle, the join
 *    pipeline, presence pushes)   inspect (a project's status for the inspector page)
 * 3  postgres (postgres_changes: checks, registry entries, system messages)
 *    broadcast (client and REST broadcasts, private channels, replay)
 *    auth (credentials: the platform's keys, projects' API keys and token issuers; revoked keys' sockets)
 * 4  resume (postgres_changes resume: records, history reads, the replay seam; ResumableChannel is
 *    its port)   quota (per-project limits, counted across replicas)   session (one connection:
 *    write path, rate windows; every open connection)
 * 5  fanout  presence
 * 6  history (what fanout records and replays)  relay (NATS: carries protocol's broadcasts)
 * 7  protocol (Phoenix codec, vsn 1/2, the typed join, SSE events, UserBroadcast)
 * 8  config  metrics  log
 * </pre>
 *
 * A class may use its own package and packages of a higher number only: never one above, nor
 * a neighbour in its own row (as cdc-worker's test). A new package must be given a row here.
 */
class ArchitectureTest {
    private static final String FRONT = "dev.aura.realtime.front";
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(FRONT);

    /** Each top package's row (docs/architecture.md); a new package must be given one. */
    private static final Map<String, Integer> LAYER = Map.ofEntries(
            Map.entry("", 0),
            Map.entry("transport", 1),
            Map.entry("channel", 2),
            Map.entry("inspect", 2),
            Map.entry("postgres", 3),
            Map.entry("broadcast", 3),
            Map.entry("auth", 3),
            Map.entry("resume", 4),
            Map.entry("quota", 4),
            Map.entry("session", 4),
            Map.entry("fanout", 5),
            Map.entry("presence", 5),
            Map.entry("history", 6),
            Map.entry("relay", 6),
            Map.entry("protocol", 7),
            Map.entry("config", 8),
            Map.entry("metrics", 8),
            Map.entry("log", 8));

    @Test
    void dependenciesPointDownTheRows() {
        classes()
                .that()
                .resideInAPackage(FRONT + "..")
                .should(dependOnlyOnLowerRows())
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
                        FRONT + ".channel..",
                        FRONT + ".inspect..",
                        FRONT + ".postgres..",
                        FRONT + ".broadcast..",
                        FRONT + ".session..",
                        FRONT + ".quota..",
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
                .resideInAnyPackage(
                        FRONT + ".channel..",
                        FRONT + ".inspect..",
                        FRONT + ".postgres..",
                        FRONT + ".broadcast..",
                        FRONT + ".session..",
                        FRONT + ".quota..")
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

    private static ArchCondition<JavaClass> dependOnlyOnLowerRows() {
        return new ArchCondition<>("depend only on their own package or packages of a lower row") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                String from = topPackage(origin);
                if (!LAYER.containsKey(from)) {
                    events.add(SimpleConditionEvent.violated(
                            origin, "package " + FRONT + "." + from + " has no row in ArchitectureTest"));
                    return;
                }
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    JavaClass target = d.getTargetClass().getBaseComponentType();
                    String pkg = target.getPackageName();
                    if (!pkg.equals(FRONT) && !pkg.startsWith(FRONT + ".")) {
                        continue;
                    }
                    String to = topPackage(target);
                    if (!to.equals(from) && LAYER.getOrDefault(to, -1) <= LAYER.get(from)) {
                        events.add(SimpleConditionEvent.violated(
                                d,
                                "points up or sideways (" + label(from) + " -> " + label(to) + "): "
                                        + d.getDescription()));
                    }
                }
            }
        };
    }

    /** {@code fanout} for {@code dev.aura.realtime.front.fanout.x}, {@code ""} for the root package. */
    private static String topPackage(JavaClass c) {
        String pkg = c.getPackageName();
        return pkg.equals(FRONT) ? "" : pkg.substring(FRONT.length() + 1).split("\\.")[0];
    }

    private static String label(String top) {
        return top.isEmpty() ? "front" : top;
    }
}
