package dev.aura.realtime.cdc;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleName;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.List;
import java.util.Map;

/**
 * The cdc-worker's package graph points one way, from the wiring down to plain types:
 *
 * <pre>
 * 0  cdc (CdcWorker, CdcWorkerMain: wiring only)
 * 1  leader  slot  pipeline  control  rpc  upkeep
 * 2  registry  match  rls  publish  decode  http  keys
 * 3  platform (platform SQL)  tenant (tenant SQL)
 * 4  event  health  fence  config
 * 5  failure  metrics
 * </pre>
 *
 * A class may use its own package and packages of a higher number only: never one above, nor
 * a neighbour in its own row. A new package must be given a row here.
 */
@AnalyzeClasses(packages = ArchitectureTest.ROOT, importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    static final String ROOT = "dev.aura.realtime.cdc";

    private static final Map<String, Integer> LAYER = Map.ofEntries(
            Map.entry("", 0),
            Map.entry("leader", 1),
            Map.entry("slot", 1),
            Map.entry("pipeline", 1),
            Map.entry("control", 1),
            Map.entry("rpc", 1),
            Map.entry("upkeep", 1),
            Map.entry("registry", 2),
            Map.entry("match", 2),
            Map.entry("rls", 2),
            Map.entry("publish", 2),
            Map.entry("decode", 2),
            Map.entry("http", 2),
            Map.entry("keys", 2),
            Map.entry("platform", 3),
            Map.entry("tenant", 3),
            Map.entry("event", 4),
            Map.entry("health", 4),
            Map.entry("fence", 4),
            Map.entry("config", 4),
            Map.entry("failure", 5),
            Map.entry("identity", 5),
            Map.entry("metrics", 5));

    @ArchTest
    static final ArchRule dependenciesPointDownTheLayers =
            classes().that().resideInAPackage(ROOT + "..").should(dependOnlyOnLowerLayers());

    @ArchTest
    static final ArchRule packagesHaveNoCycles =
            slices().matching(ROOT + ".(*)..").should().beFreeOfCycles();

    /** Statements run on connections only in the two SQL homes and on the slot's replication connection. */
    @ArchTest
    static final ArchRule sqlLivesInPlatformTenantAndSlot = noClasses()
            .that()
            .resideOutsideOfPackages(ROOT + ".platform..", ROOT + ".tenant..", ROOT + ".slot..")
            .should()
            .dependOnClassesThat()
            .haveFullyQualifiedName("java.sql.Connection")
            .orShould()
            .dependOnClassesThat()
            .haveFullyQualifiedName("java.sql.Statement")
            .orShould()
            .dependOnClassesThat()
            .haveFullyQualifiedName("java.sql.PreparedStatement");

    /** Only the wiring hands the pool out; everything else gets a PlatformDb or a TenantDb. */
    @ArchTest
    static final ArchRule onlyTheWiringAndTheSqlHomesSeeTheDataSource = noClasses()
            .that()
            .resideOutsideOfPackages(ROOT + ".platform..", ROOT + ".tenant..")
            .and()
            .doNotHaveFullyQualifiedName(ROOT + ".CdcWorker")
            .should()
            .dependOnClassesThat()
            .haveFullyQualifiedName("javax.sql.DataSource");

    /** jnats' public API only ({@code Headers} is the one public type jnats keeps in {@code impl}). */
    @ArchTest
    static final ArchRule noJnatsInternals = noClasses()
            .should()
            .dependOnClassesThat(resideInAPackage("io.nats.client.impl..").and(not(simpleName("Headers"))));

    /** The slot reader knows nothing of NATS: it hands changes to a sink. */
    @ArchTest
    static final ArchRule slotKnowsNothingOfNats = noClasses()
            .that()
            .resideInAPackage(ROOT + ".slot..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.nats..");

    private static ArchCondition<JavaClass> dependOnlyOnLowerLayers() {
        return new ArchCondition<>("depend only on their own package or packages of a lower layer") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                String from = topPackage(origin);
                if (!LAYER.containsKey(from)) {
                    events.add(SimpleConditionEvent.violated(
                            origin, "package " + ROOT + "." + from + " has no layer in ArchitectureTest"));
                    return;
                }
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    JavaClass target = d.getTargetClass().getBaseComponentType();
                    if (!isProduct(target)) {
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

    private static boolean isProduct(JavaClass c) {
        return c.getPackageName().equals(ROOT) || c.getPackageName().startsWith(ROOT + ".");
    }

    /** {@code platform} for {@code dev.aura.realtime.cdc.platform.x}, {@code ""} for the root package. */
    private static String topPackage(JavaClass c) {
        String pkg = c.getPackageName();
        if (pkg.equals(ROOT)) {
            return "";
        }
        List<String> parts = List.of(pkg.substring(ROOT.length() + 1).split("\\."));
        return parts.get(0);
    }

    private static String label(String top) {
        return top.isEmpty() ? "cdc" : top;
    }
}
