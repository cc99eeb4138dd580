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
 * 1  startup (the start-up's named steps, what they build, the retry)
 * 2  leader  slot  pipeline  control  join (join-time checks)  upkeep
 * 3  registry  match  rls (delivery-time RLS)  publish  decode  http  keys (projects' own keys)
 * 4  tenant (the safe tenant session)  provision (what the platform login creates)
 * 5  catalog (what the platform login reads; its pool)
 * 6  event  health  fence  config
 * 7  failure  metrics  identity
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
            Map.entry("startup", 1),
            Map.entry("leader", 2),
            Map.entry("slot", 2),
            Map.entry("pipeline", 2),
            Map.entry("control", 2),
            Map.entry("join", 2),
            Map.entry("upkeep", 2),
            Map.entry("registry", 3),
            Map.entry("match", 3),
            Map.entry("rls", 3),
            Map.entry("publish", 3),
            Map.entry("decode", 3),
            Map.entry("http", 3),
            Map.entry("keys", 3),
            Map.entry("tenant", 4),
            Map.entry("provision", 4),
            Map.entry("catalog", 5),
            Map.entry("event", 6),
            Map.entry("health", 6),
            Map.entry("fence", 6),
            Map.entry("config", 6),
            Map.entry("failure", 7),
            Map.entry("identity", 7),
            Map.entry("metrics", 7));

    @ArchTest
    static final ArchRule dependenciesPointDownTheLayers =
            classes().that().resideInAPackage(ROOT + "..").should(dependOnlyOnLowerLayers());

    @ArchTest
    static final ArchRule packagesHaveNoCycles =
            slices().matching(ROOT + ".(*)..").should().beFreeOfCycles();

    /**
     * Statements run on connections only in the SQL homes: the platform login's ({@code catalog},
     * {@code provision}), the tenant session ({@code tenant}) and the slot's replication connection.
     */
    @ArchTest
    static final ArchRule sqlLivesInItsHomes = noClasses()
            .that()
            .resideOutsideOfPackages(ROOT + ".catalog..", ROOT + ".provision..", ROOT + ".tenant..", ROOT + ".slot..")
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
            .resideOutsideOfPackages(ROOT + ".catalog..", ROOT + ".tenant..")
            .and()
            .doNotHaveFullyQualifiedName(ROOT + ".CdcWorker")
            .should()
            .dependOnClassesThat()
            .haveFullyQualifiedName("javax.sql.DataSource");

    /**
     * Platform SQL never runs tenant code, and tenant SQL runs nothing else (docs/security.md): the
     * tenant session never reaches the platform login's pool or its SQL. (The layers already keep
     * the platform's SQL homes off the tenant session.)
     */
    @ArchTest
    static final ArchRule theTenantSessionNeverReachesThePlatformLogin = noClasses()
            .that()
            .resideInAPackage(ROOT + ".tenant..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(ROOT + ".catalog..", ROOT + ".provision..");

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

    /** {@code catalog} for {@code dev.aura.realtime.cdc.catalog.x}, {@code ""} for the root package. */
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
