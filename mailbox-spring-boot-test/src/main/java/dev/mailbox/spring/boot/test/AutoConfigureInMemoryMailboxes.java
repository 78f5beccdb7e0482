package dev.mailbox.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.autoconfigure.properties.PropertyMapping;

/**
 * For any Spring Boot test (what {@link MailboxTest} adds to {@code @SpringBootTest}): every mailbox in memory
 * ({@code mailbox.in-memory=true}, which also turns the coordinated mode off) and wrapped in a
 * {@code CollectingMailbox}, whose bean type is {@code CollectingMailbox<T>}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration(InMemoryMailboxesAutoConfiguration.class)
@PropertyMapping("mailbox")
public @interface AutoConfigureInMemoryMailboxes {

    /** @return whether every mailbox lives in memory (mapped to {@code mailbox.in-memory}) */
    boolean inMemory() default true;
}
