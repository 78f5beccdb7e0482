package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Surefire's XML report of a class counts its tests by method name, across all its {@code @Nested}
 * classes: two tests of the same name in two groups of the contract would be reported as one, and a tool
 * that sums the reports would miss a test that ran. So every test method of the contract has its own name.
 */
class ContractReportNamesTest {

    @Test
    @DisplayName("every test method of MailboxContract, across its nested groups, has a distinct name")
    void distinctNames() {
        Map<String, List<String>> groupsByName = new HashMap<>();
        collect(MailboxContract.class, groupsByName);
        assertThat(groupsByName).as("the contract has tests").isNotEmpty();
        assertThat(groupsByName.entrySet().stream().filter(e -> e.getValue().size() > 1).map(Map.Entry::toString))
                .as("test methods named alike in several groups").isEmpty();
    }

    private static void collect(Class<?> type, Map<String, List<String>> groupsByName) {
        // a group kept in a file of its own is a nested class that inherits its tests
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method method : c.getDeclaredMethods()) {
                if (method.isAnnotationPresent(Test.class)) {
                    groupsByName.computeIfAbsent(method.getName(), k -> new ArrayList<>()).add(type.getSimpleName());
                }
            }
        }
        for (Class<?> nested : type.getDeclaredClasses()) {
            if (nested.isAnnotationPresent(Nested.class)) {
                collect(nested, groupsByName);
            }
        }
    }
}
