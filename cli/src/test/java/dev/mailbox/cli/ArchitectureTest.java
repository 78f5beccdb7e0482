package dev.mailbox.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of DESIGN.md, checked on the compiled classes of every module. It lives in the cli
 * module because the cli is the one module whose classpath holds all the others.
 */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.mailbox");
    }

    @Test
    @DisplayName("the api depends on nothing of ours and on no serialization library")
    void api() {
        noClasses().that().resideInAPackage("dev.mailbox.api..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.mailbox.inmemory..", "dev.mailbox.redis..",
                        "dev.mailbox.sqs..", "dev.mailbox.json..", "dev.mailbox.mainloop..", "dev.mailbox.coordination..",
                        "dev.mailbox.testkit..", "com.fasterxml..")
                .check(classes);
    }

    @Test
    @DisplayName("no backend depends on another backend")
    void backends() {
        List<String> backends = List.of("inmemory", "redis", "sqs");
        for (String backend : backends) {
            String[] others = backends.stream().filter(b -> !b.equals(backend)).map(b -> "dev.mailbox." + b + "..")
                    .toArray(String[]::new);
            noClasses().that().resideInAPackage("dev.mailbox." + backend + "..")
                    .should().dependOnClassesThat().resideInAnyPackage(others).check(classes);
        }
    }

    @Test
    @DisplayName("the coordination client and protocol never reach the server, Ratis or an HTTP server")
    void clientNeverImportsServer() {
        noClasses().that().resideInAnyPackage("dev.mailbox.coordination", "dev.mailbox.coordination.internal..",
                        "dev.mailbox.coordination.proto..", "dev.mailbox.coordination.wire..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.mailbox.coordination.server..",
                        "org.apache.ratis..", "io.micrometer.prometheusmetrics..", "com.sun.net.httpserver..")
                .check(classes);
    }

    @Test
    @DisplayName("the settings machinery needs nothing but the JDK: both servers share it, whichever module holds it")
    void settingsStandAlone() {
        noClasses().that().resideInAPackage("dev.mailbox.coordination.settings..")
                .should().dependOnClassesThat().resideOutsideOfPackages("dev.mailbox.coordination.settings..", "java..",
                        "org.jspecify..")
                .check(classes);
    }

    @Test
    @DisplayName("the web console needs no Ratis and no coordinator: the coordinator mounts it, not the other way")
    void consoleBelowTheServer() {
        noClasses().that().resideInAPackage("dev.mailbox.console..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.mailbox.coordination.server..",
                        "org.apache.ratis..", "dev.mailbox.inmemory..", "dev.mailbox.redis..", "dev.mailbox.sqs..")
                .check(classes);
    }

    @Test
    @DisplayName("the library modules never depend on the cli or the benchmarks")
    void downwardOnly() {
        noClasses().that().resideOutsideOfPackages("dev.mailbox.cli..", "dev.mailbox.benchmarks..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.mailbox.cli..", "dev.mailbox.benchmarks..")
                .check(classes);
    }

    @Test
    @DisplayName("no public signature outside an internal package exposes an internal or a Ratis type")
    void noInternalsInPublicSignatures() {
        publicApi().should(new ArchCondition<JavaCodeUnit>("expose only public, non-internal, non-Ratis types") {
            @Override
            public void check(JavaCodeUnit unit, ConditionEvents events) {
                java.util.Set<JavaClass> types = new java.util.LinkedHashSet<>(
                        unit.getReturnType().getAllInvolvedRawTypes());
                unit.getParameterTypes().forEach(t -> types.addAll(t.getAllInvolvedRawTypes()));
                for (JavaClass type : types) {
                    if (forbidden(type)) {
                        events.add(SimpleConditionEvent.violated(unit, unit.getFullName() + " exposes "
                                + type.getName()));
                    }
                }
            }
        }).check(classes);
    }

    /** Public methods and constructors of public classes in packages that are not internal. */
    private static com.tngtech.archunit.lang.syntax.elements.GivenCodeUnitsConjunction publicApi() {
        return ArchRuleDefinition.codeUnits().that().arePublic()
                .and().areDeclaredInClassesThat(DescribedPredicate.describe("public API classes",
                        (JavaClass c) -> c.getModifiers().contains(JavaModifier.PUBLIC) && c.getPackageName()
                                .startsWith("dev.mailbox") && !c.getPackageName().contains(".internal")
                                && !c.getPackageName().startsWith("dev.mailbox.coordination.proto")
                                && !c.getPackageName().startsWith("dev.mailbox.cli")
                                && !c.getPackageName().startsWith("dev.mailbox.benchmarks")));
    }

    private static boolean forbidden(JavaClass type) {
        String p = type.getPackageName();
        return p.startsWith("org.apache.ratis") || (p.startsWith("dev.mailbox") && p.contains(".internal"));
    }
}
